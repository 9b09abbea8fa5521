"""k8s/: both overlays rendered, valid per Kubernetes' schemas, and consistent with the code."""

from __future__ import annotations

import kubernetes_validate
import pytest
import yaml

from services.api.routes.system import router as system_router
from services.grpc_server.main import SHUTDOWN_GRACE_SECONDS
from services.worker.main import GRACEFUL_SHUTDOWN, PAUSE_DRAIN
from tests.deploy.kustomize import KustomizeError, build
from tests.deploy.targets import (
    K8S,
    OVERLAYS,
    SECRET_KEYS_FILE,
    env_file_keys,
    parse_command,
    rendered,
)

K8S_VERSION = "1.30.0"
SERVICES = {"api", "grpc", "webhook", "watcher", "worker-signer", "worker-sisbajud",
            "worker-pickup"}
IMAGE = "registry.example.internal/esteira"


@pytest.fixture(scope="module", params=OVERLAYS)
def overlay(request) -> tuple[str, list[dict]]:
    return request.param, rendered(request.param)


def _by_kind(docs: list[dict], kind: str) -> dict[str, dict]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def _containers(doc: dict) -> list[dict]:
    return doc["spec"]["template"]["spec"]["containers"]


def _matches(selector: dict, labels: dict) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def test_every_rendered_manifest_is_valid_kubernetes(overlay):
    _, docs = overlay
    for doc in docs:
        try:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{doc['kind']}/{doc['metadata']['name']}: {exc.message}")


def test_the_schema_check_catches_a_misspelt_field():
    deployment = _by_kind(rendered("prod"), "Deployment")["esteira-api"]
    _containers(deployment)[0]["livenesProbe"] = _containers(deployment)[0].pop("livenessProbe")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)


def test_one_deployment_per_service_each_running_a_valid_command_on_the_overlay_image(overlay):
    name, docs = overlay
    deployments = _by_kind(docs, "Deployment")
    assert set(deployments) == {f"esteira-{s}" for s in SERVICES}
    jobs = _by_kind(docs, "Job")
    assert [c["args"] for c in _containers(jobs["esteira-migrate"])] == [["migrate"]]
    for doc in [*deployments.values(), *jobs.values()]:
        for container in _containers(doc):
            parse_command(container["args"])
            assert container["image"] == f"{IMAGE}:{'dev' if name == 'dev' else '0.1.0'}"
            resources = container["resources"]
            assert {"cpu", "memory"} <= set(resources["requests"]) & set(resources["limits"])


def test_probes_hit_the_api_routes_that_exist(overlay):
    _, docs = overlay
    paths = {route.path for route in system_router.routes}
    [api] = _containers(_by_kind(docs, "Deployment")["esteira-api"])
    assert api["livenessProbe"]["httpGet"]["path"] == "/api/health" in paths
    assert api["readinessProbe"]["httpGet"]["path"] == "/api/ready" in paths
    [webhook] = _containers(_by_kind(docs, "Deployment")["esteira-webhook"])
    assert webhook["readinessProbe"]["httpGet"]["path"] == "/health"
    [grpc] = _containers(_by_kind(docs, "Deployment")["esteira-grpc"])
    assert grpc["readinessProbe"]["grpc"]["port"] == 50051


def test_every_reference_resolves(overlay):
    _, docs = overlay
    deployments = _by_kind(docs, "Deployment")
    config_maps, claims = _by_kind(docs, "ConfigMap"), _by_kind(docs, "PersistentVolumeClaim")
    for doc in [*deployments.values(), *_by_kind(docs, "Job").values()]:
        pod = doc["spec"]["template"]["spec"]
        for container in pod["containers"]:
            refs = container["envFrom"]
            assert next(r["configMapRef"]["name"] for r in refs if "configMapRef" in r) \
                in config_maps
            assert [r["secretRef"]["name"] for r in refs if "secretRef" in r] == \
                ["esteira-secrets"]
        for volume in pod["volumes"]:
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in claims
    for hpa in _by_kind(docs, "HorizontalPodAutoscaler").values():
        assert hpa["spec"]["scaleTargetRef"]["name"] in deployments
        # Each `kubectl apply` would otherwise reset the autoscaled count.
        assert "replicas" not in deployments[hpa["spec"]["scaleTargetRef"]["name"]]["spec"]
        assert hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    templates = {n: d["spec"]["template"]["metadata"]["labels"] for n, d in deployments.items()}
    for pdb in _by_kind(docs, "PodDisruptionBudget").values():
        assert sum(_matches(pdb["spec"]["selector"]["matchLabels"], t)
                   for t in templates.values()) == 1
    for service in _by_kind(docs, "Service").values():
        [target] = [n for n, t in templates.items() if _matches(service["spec"]["selector"], t)]
        port_names = {p["name"] for c in _containers(deployments[target]) for p in c["ports"]}
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= port_names


def test_the_secret_keys_are_documented_and_the_config_map_holds_no_secret(overlay):
    _, docs = overlay
    [config] = _by_kind(docs, "ConfigMap").values()
    secret_keys = env_file_keys(SECRET_KEYS_FILE)
    assert {"ESTEIRA_API_KEY", "ESTEIRA_DATABASE_URL"} <= secret_keys
    assert not set(config["data"]) & secret_keys
    assert not any(word in key for key in config["data"] for word in ("TOKEN", "KEY", "SECRET"))


def test_the_signer_tree_is_one_read_write_many_volume_for_every_pod_that_touches_it(overlay):
    _, docs = overlay
    [claim] = _by_kind(docs, "PersistentVolumeClaim").values()
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    deployments = _by_kind(docs, "Deployment")
    for name in ("esteira-api", "esteira-watcher", "esteira-worker-signer"):
        mounts = {m["mountPath"] for m in _containers(deployments[name])[0]["volumeMounts"]}
        assert "/var/lib/esteira/data" in mounts, name


def test_shutdown_leaves_in_flight_work_time_to_finish(overlay):
    _, docs = overlay
    deployments = _by_kind(docs, "Deployment")
    for name, doc in deployments.items():
        pod = doc["spec"]["template"]["spec"]
        grace = pod["terminationGracePeriodSeconds"]
        pre_stop = int(pod["containers"][0].get("lifecycle", {}).get("preStop", {})
                       .get("exec", {}).get("command", ["sleep", "0"])[1])
        if name == "esteira-worker-signer":
            # A paused or stopping signer worker lets a signature in progress end.
            assert grace > PAUSE_DRAIN.total_seconds()
        elif name.startswith("esteira-worker"):
            assert grace > GRACEFUL_SHUTDOWN.total_seconds()
        else:
            assert grace > pre_stop + max(SHUTDOWN_GRACE_SECONDS, 10)
        if "ports" in pod["containers"][0]:
            assert pre_stop > 0, f"{name}: endpoints must drain before SIGTERM"


def test_the_watcher_is_single_and_never_overlaps_itself(overlay):
    _, docs = overlay
    watcher = _by_kind(docs, "Deployment")["esteira-watcher"]
    assert watcher["spec"]["replicas"] == 1 and watcher["spec"]["strategy"]["type"] == "Recreate"
    assert "esteira-watcher" not in {h["spec"]["scaleTargetRef"]["name"] for h in
                                     _by_kind(docs, "HorizontalPodAutoscaler").values()}


def test_network_policy_admits_only_the_listening_ports(overlay):
    _, docs = overlay
    policies = _by_kind(docs, "NetworkPolicy")
    deny = policies["esteira-default-deny-ingress"]["spec"]
    assert deny["policyTypes"] == ["Ingress"] and "ingress" not in deny
    deployments = _by_kind(docs, "Deployment")
    for name, policy in policies.items():
        if name == "esteira-default-deny-ingress":
            continue
        [target] = [d for d in deployments.values() if _matches(
            policy["spec"]["podSelector"]["matchLabels"],
            d["spec"]["template"]["metadata"]["labels"])]
        container_ports = {p["containerPort"] for p in _containers(target)[0]["ports"]}
        assert {p["port"] for r in policy["spec"]["ingress"] for p in r["ports"]} \
            == container_ports


def test_overlays_differ_where_documented():
    dev, prod = rendered("dev"), rendered("prod")
    assert {d["metadata"].get("namespace") for d in dev if d["kind"] != "Namespace"} \
        == {"esteira-dev"}
    assert {d["metadata"].get("namespace") for d in prod if d["kind"] != "Namespace"} \
        == {"esteira"}
    [dev_config], [prod_config] = (_by_kind(d, "ConfigMap").values() for d in (dev, prod))
    assert dev_config["data"]["ESTEIRA_LOGGING__LEVEL"] == "DEBUG"
    assert prod_config["data"]["ESTEIRA_ENVIRONMENT"] == "Production"
    # The content hash in the name rolls the pods when the configuration changes.
    assert dev_config["metadata"]["name"] != prod_config["metadata"]["name"]
    assert _by_kind(prod, "Deployment")["esteira-api"]["spec"]["replicas"] == 2
    assert _by_kind(prod, "HorizontalPodAutoscaler")["esteira-worker-signer"]["spec"][
        "minReplicas"] == 2
    assert _by_kind(dev, "HorizontalPodAutoscaler")["esteira-worker-signer"]["spec"][
        "maxReplicas"] == 2
    assert _by_kind(prod, "PersistentVolumeClaim")["esteira-data"]["spec"][
        "storageClassName"] == "nfs-rwx"


def test_the_renderer_refuses_what_it_does_not_render(tmp_path):
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(
        {"resources": [], "namePrefix": "x-"}))
    with pytest.raises(KustomizeError, match="namePrefix"):
        build(tmp_path)


def test_the_base_renders_on_its_own():
    names = {d["metadata"]["name"] for d in build(K8S / "base")}
    assert "esteira-migrate" in names and "esteira-data" in names
