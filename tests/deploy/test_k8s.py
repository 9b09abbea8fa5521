"""k8s/: both overlays rendered, valid per Kubernetes' schemas, and consistent with the code."""

from __future__ import annotations

import shutil
import subprocess
from urllib.parse import urlsplit

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
# Prometheus Operator resources the Kubernetes schemas lack; checked by their own tests here
# (PodMonitor) and in tests/deploy/test_alerts.py (PrometheusRule).
CUSTOM_KINDS = {("monitoring.coreos.com/v1", "PrometheusRule"),
                ("monitoring.coreos.com/v1", "PodMonitor")}
OPS_PORT = 9464
OPS_PATHS = {"/metrics", "/livez", "/readyz"}
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
    assert {(d["apiVersion"], d["kind"]) for d in docs} & CUSTOM_KINDS == CUSTOM_KINDS
    for doc in docs:
        if (doc["apiVersion"], doc["kind"]) in CUSTOM_KINDS:
            continue
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


def _probe(container: dict, kind: str) -> tuple[str, str]:
    http = container[kind]["httpGet"]
    return http["path"], http["port"]


def test_every_pod_is_ready_on_its_own_ops_port_and_the_api_lives_on_its_routes(overlay):
    """Readiness is the pod's own (/readyz on the ops port), never /api/ready, the whole
    system's verdict: one worker Deployment down must not take the API's endpoints away."""
    _, docs = overlay
    paths = {route.path for route in system_router.routes}
    for name, deployment in _by_kind(docs, "Deployment").items():
        [container] = _containers(deployment)
        assert _probe(container, "readinessProbe") == ("/readyz", "metrics"), name
        assert {"name": "metrics", "containerPort": OPS_PORT} in container["ports"], name
    [api] = _containers(_by_kind(docs, "Deployment")["esteira-api"])
    assert api["livenessProbe"]["httpGet"]["path"] == "/api/health" in paths
    assert "/api/ready" in paths, "the system verdict stays for external monitors"
    [webhook] = _containers(_by_kind(docs, "Deployment")["esteira-webhook"])
    assert webhook["livenessProbe"]["httpGet"]["path"] == "/health"
    [grpc] = _containers(_by_kind(docs, "Deployment")["esteira-grpc"])
    assert grpc["livenessProbe"]["grpc"]["port"] == 50051


def test_workers_and_the_watcher_have_a_liveness_probe_on_their_event_loop(overlay):
    _, docs = overlay
    for name in ("esteira-watcher", "esteira-worker-signer", "esteira-worker-sisbajud",
                 "esteira-worker-pickup"):
        [container] = _containers(_by_kind(docs, "Deployment")[name])
        assert _probe(container, "livenessProbe") == ("/livez", "metrics"), name
        # A slow first connection is not a hang: the startup probe holds liveness off.
        assert _probe(container, "startupProbe") == ("/livez", "metrics"), name


def test_the_ops_port_is_one_setting_every_pod_reads(overlay):
    _, docs = overlay
    [config] = [d for d in docs if d["kind"] == "ConfigMap"
                and d["metadata"]["name"].startswith("esteira-config")]
    assert config["data"]["ESTEIRA_PORTS__METRICS"] == str(OPS_PORT)
    for deployment in _by_kind(docs, "Deployment").values():
        [container] = _containers(deployment)
        refs = {s["configMapRef"]["name"] for s in container["envFrom"] if "configMapRef" in s}
        assert config["metadata"]["name"] in refs


def test_every_component_has_its_pod_monitor_on_the_ops_port(overlay):
    _, docs = overlay
    monitors = _by_kind(docs, "PodMonitor")
    assert set(monitors) == {f"esteira-{s}" for s in SERVICES}
    pods = {name: d["spec"]["template"] for name, d in _by_kind(docs, "Deployment").items()}
    for name, monitor in monitors.items():
        assert set(monitor["spec"]) == {"selector", "podMetricsEndpoints"}
        selected = [n for n, pod in pods.items()
                    if _matches(monitor["spec"]["selector"]["matchLabels"],
                                pod["metadata"]["labels"])]
        assert selected == [name], f"{name} scrapes {selected}"
        [endpoint] = monitor["spec"]["podMetricsEndpoints"]
        ports = {p["name"] for p in _containers(_by_kind(docs, "Deployment")[name])[0]["ports"]}
        assert endpoint["port"] == "metrics" in ports
        assert endpoint["path"] in OPS_PATHS


def test_the_migrate_job_is_replaced_when_reapplied():
    """Its pod template is immutable: every sync tool is told to replace it, not patch it."""
    job = _by_kind(rendered("prod"), "Job")["esteira-migrate"]
    annotations = job["metadata"]["annotations"]
    assert annotations["argocd.argoproj.io/sync-options"] == "Force=true,Replace=true"
    assert annotations["kustomize.toolkit.fluxcd.io/force"] == "enabled"
    assert job["metadata"]["labels"]["app.kubernetes.io/component"] == "migrate"


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
        served = [p for p in pod["containers"][0]["ports"] if p["name"] != "metrics"]
        if served:  # behind a Service (the ops port is scraped per pod, never load-balanced)
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
    for name, deployment in _by_kind(docs, "Deployment").items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        admitted = {p["port"] for policy in policies.values()
                    if _matches(policy["spec"]["podSelector"]["matchLabels"], labels)
                    for rule in policy["spec"].get("ingress", []) for p in rule["ports"]}
        assert admitted == {p["containerPort"] for p in _containers(deployment)[0]["ports"]}, \
            name
    # The ops port only from Prometheus's namespace, never from anywhere.
    [rule] = policies["esteira-metrics-ingress"]["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": OPS_PORT}]
    assert rule["from"] == [{"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "monitoring"}}}]


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


# --- the rules an operator expects of every pod ---------------------------------------------

WORKERS = {"esteira-worker-signer", "esteira-worker-sisbajud", "esteira-worker-pickup"}
# Pods that serve nothing have no port to probe; Temporal notices a lost worker by heartbeats.
UNPROBED = WORKERS | {"esteira-watcher"}
# Where the image's processes write (Python's tempfile; the Dockerfile's log directory).
WRITABLE_PATHS = ("/tmp", "/var/log/esteira")
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSPHRASE", "PIN", "CREDENTIAL",
                "DATABASE_URL")
PLATFORM = K8S / "platform"
TEMPORAL_CLIENTS = {"api", "grpc", "watcher", "worker-signer", "worker-sisbajud",
                    "worker-pickup", "migrate"}
TEMPORAL_FRONTEND_LABELS = {"app.kubernetes.io/name": "temporal",
                            "app.kubernetes.io/component": "frontend"}
DATABASE = ("postgres", {"app.kubernetes.io/name": "postgresql"})


def _pods(docs: list[dict]) -> dict[str, dict]:
    """Pod templates of every Deployment and Job, by workload name."""
    return {d["metadata"]["name"]: d["spec"]["template"] for d in docs
            if d["kind"] in ("Deployment", "Job")}


def _all_containers(pod_spec: dict) -> list[dict]:
    return pod_spec["containers"] + pod_spec.get("initContainers", [])


def _quantity(value: str | int) -> float:
    factors = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "m": 1e-3, "k": 1e3,
               "M": 1e6, "G": 1e9}
    text = str(value)
    for suffix, factor in factors.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def test_every_container_requests_what_it_may_use_and_no_more_than_its_limit(overlay):
    _, docs = overlay
    for name, template in _pods(docs).items():
        for container in _all_containers(template["spec"]):
            resources = container["resources"]
            for resource in ("cpu", "memory"):
                assert 0 < _quantity(resources["requests"][resource]) \
                    <= _quantity(resources["limits"][resource]), (name, resource)


def test_every_listening_container_is_probed_on_a_port_it_declares(overlay):
    _, docs = overlay
    for name, doc in _by_kind(docs, "Deployment").items():
        [container] = _containers(doc)
        ports = container.get("ports", [])
        if not ports:
            assert name in UNPROBED, f"{name}: nothing to probe but not a documented exception"
            continue
        declared = {p["name"] for p in ports} | {p["containerPort"] for p in ports}
        for kind in ("livenessProbe", "readinessProbe"):
            probe = container[kind]
            [handler] = [probe[h] for h in ("httpGet", "grpc", "tcpSocket") if h in probe]
            assert handler["port"] in declared, (name, kind)


def test_each_worker_has_one_disruption_budget_and_one_autoscaler(overlay):
    name, docs = overlay
    deployments = _by_kind(docs, "Deployment")
    budgets = _by_kind(docs, "PodDisruptionBudget").values()
    autoscalers = _by_kind(docs, "HorizontalPodAutoscaler").values()
    assert set(deployments) >= WORKERS
    for worker in WORKERS:
        labels = deployments[worker]["spec"]["template"]["metadata"]["labels"]
        [budget] = [b for b in budgets if _matches(b["spec"]["selector"]["matchLabels"], labels)]
        # One at a time: a drain proceeds (0 would block it) and never empties the queue.
        assert budget["spec"]["maxUnavailable"] == 1
        [scaler] = [a for a in autoscalers if a["spec"]["scaleTargetRef"]["name"] == worker]
        if name == "prod":
            assert scaler["spec"]["minReplicas"] >= 2, "a drained worker must leave a poller"


def _security_violations(pod_spec: dict) -> list[str]:
    """What keeps a pod from running non-root on a read-only root filesystem."""
    found = []
    context = pod_spec.get("securityContext", {})
    if context.get("runAsNonRoot") is not True or not context.get("runAsUser"):
        found.append("pod may run as root")
    volumes = {v["name"]: v for v in pod_spec.get("volumes", [])}
    for container in _all_containers(pod_spec):
        name, own = container["name"], container.get("securityContext", {})
        if own.get("readOnlyRootFilesystem") is not True:
            found.append(f"{name}: writable root filesystem")
        if own.get("allowPrivilegeEscalation") is not False or own.get("privileged"):
            found.append(f"{name}: may escalate privileges")
        if own.get("capabilities", {}).get("drop") != ["ALL"]:
            found.append(f"{name}: keeps Linux capabilities")
        if own.get("runAsUser") == 0 or own.get("runAsNonRoot") is False:
            found.append(f"{name}: runs as root")
        mounts = {m["mountPath"]: m for m in container.get("volumeMounts", [])}
        for path in WRITABLE_PATHS:
            mount = mounts.get(path)
            volume = volumes.get(mount["name"], {}) if mount else {}
            if mount is None or mount.get("readOnly") or not (
                    "emptyDir" in volume or "persistentVolumeClaim" in volume):
                found.append(f"{name}: {path} is not a writable volume")
    return found


def test_pods_run_as_non_root_on_a_read_only_root_with_writable_volumes(overlay):
    _, docs = overlay
    for name, template in _pods(docs).items():
        assert _security_violations(template["spec"]) == [], name


def test_the_security_rule_catches_a_root_pod_and_a_missing_tmp():
    template = _pods(rendered("prod"))["esteira-api"]["spec"]
    template["securityContext"]["runAsNonRoot"] = False
    container = template["containers"][0]
    container["securityContext"]["readOnlyRootFilesystem"] = False
    container["volumeMounts"] = [m for m in container["volumeMounts"] if m["mountPath"] != "/tmp"]
    assert _security_violations(template) == [
        "pod may run as root", "api: writable root filesystem",
        "api: /tmp is not a writable volume"]


def _literal_secrets(pod_spec: dict, secret_keys: set[str]) -> list[str]:
    """Secret-looking variables with a literal value or taken from anything but a Secret."""
    found = []
    for container in _all_containers(pod_spec):
        for source in container.get("envFrom", []):
            if not set(source) <= {"configMapRef", "secretRef", "prefix"}:
                found.append(f"{container['name']}: envFrom {sorted(source)}")
        for var in container.get("env", []):
            secret_like = var["name"] in secret_keys or any(
                word in var["name"] for word in SECRET_WORDS)
            if secret_like and "secretKeyRef" not in var.get("valueFrom", {}):
                found.append(f"{container['name']}: {var['name']}")
    return found


def test_secrets_reach_containers_only_from_secret_objects(overlay):
    _, docs = overlay
    # The Secret is created out of band (secret.env.example); no manifest carries values.
    assert "Secret" not in {d["kind"] for d in docs}
    keys = env_file_keys(SECRET_KEYS_FILE)
    for name, template in _pods(docs).items():
        assert _literal_secrets(template["spec"], keys) == [], name


def test_the_secret_rule_catches_a_literal_token():
    template = _pods(rendered("prod"))["esteira-worker-sisbajud"]["spec"]
    template["containers"][0]["env"] = [
        {"name": "ESTEIRA_SISBAJUD__MENSAGERIA_TOKEN", "value": "hunter2"},
        {"name": "ESTEIRA_API_KEY", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "k"}}},
        {"name": "ESTEIRA_DATABASE_URL",
         "valueFrom": {"secretKeyRef": {"name": "esteira-secrets", "key": "url"}}}]
    assert _literal_secrets(template, env_file_keys(SECRET_KEYS_FILE)) == [
        "worker-sisbajud: ESTEIRA_SISBAJUD__MENSAGERIA_TOKEN", "worker-sisbajud: ESTEIRA_API_KEY"]


# --- NetworkPolicies that keep Temporal's frontend and the database private ------------------

def _selects(selector: dict, labels: dict) -> bool:
    """A Kubernetes label selector (matchLabels and matchExpressions) against `labels`."""
    if not _matches(selector.get("matchLabels", {}), labels):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator, values = expression["key"], expression["operator"], \
            expression.get("values", [])
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and labels.get(key) in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _admits(policies: list[dict], source: tuple[str, dict], target: tuple[str, dict],
            port: int) -> bool:
    """Kubernetes' ingress semantics: open unless a policy selects the target, then allow-list."""
    (source_ns, source_labels), (target_ns, target_labels) = source, target
    selecting = [p for p in policies if p["metadata"]["namespace"] == target_ns
                 and "Ingress" in p["spec"].get("policyTypes", ["Ingress"])
                 and _selects(p["spec"]["podSelector"], target_labels)]
    if not selecting:
        return True
    for policy in selecting:
        for rule in policy["spec"].get("ingress", []):
            if "ports" in rule and port not in {p["port"] for p in rule["ports"]}:
                continue
            if "from" not in rule:
                return True
            for peer in rule["from"]:
                if "ipBlock" in peer:
                    continue
                namespace_ok = (_selects(peer["namespaceSelector"],
                                         {"kubernetes.io/metadata.name": source_ns})
                                if "namespaceSelector" in peer else source_ns == target_ns)
                if namespace_ok and _selects(peer.get("podSelector", {}), source_labels):
                    return True
    return False


def _env_example_value(key: str) -> str:
    lines = SECRET_KEYS_FILE.read_text().splitlines()
    return next(line.split("=", 1)[1] for line in lines if line.startswith(f"{key}="))


def test_the_platform_policies_are_valid_kubernetes():
    docs = build(PLATFORM)
    assert {d["kind"] for d in docs} == {"NetworkPolicy"}
    for doc in docs:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_only_esteira_clients_reach_temporal_and_the_database(overlay):
    _, docs = overlay
    policies = build(PLATFORM)
    [config] = _by_kind(docs, "ConfigMap").values()
    host, _, port = config["data"]["TEMPORAL_ADDRESS"].rpartition(":")
    # temporal-frontend.<namespace>.svc…: the policy must sit in the namespace dialled.
    frontend = (host.split(".")[1], TEMPORAL_FRONTEND_LABELS)
    temporal_port = int(port)
    database_port = urlsplit(_env_example_value("ESTEIRA_DATABASE_URL")).port
    [namespace] = {d["metadata"]["namespace"] for d in docs if d["kind"] == "Deployment"}
    for name, template in _pods(docs).items():
        source = (namespace, template["metadata"]["labels"])
        component = name.removeprefix("esteira-")
        assert _admits(policies, source, frontend, temporal_port) == \
            (component in TEMPORAL_CLIENTS), name
        assert _admits(policies, source, DATABASE, database_port), name
    strangers = [("default", {"app": "x"}), (namespace, {"app": "debug-shell"}),
                 ("default", {"esteira.io/temporal-client": "true",
                              "esteira.io/database-client": "true"})]
    for stranger in strangers:
        assert not _admits(policies, stranger, frontend, temporal_port), stranger
        assert not _admits(policies, stranger, DATABASE, database_port), stranger
    # Temporal's own services keep reaching their frontend.
    assert _admits(policies, (frontend[0], {"app.kubernetes.io/component": "history"}),
                   frontend, temporal_port)


def test_the_policy_model_opens_unselected_pods_and_closes_selected_ones():
    deny_all = {"metadata": {"namespace": "db"},
                "spec": {"podSelector": {"matchLabels": {"app": "pg"}}, "policyTypes": ["Ingress"]}}
    assert _admits([deny_all], ("a", {}), ("db", {"app": "other"}), 5432)
    assert not _admits([deny_all], ("db", {"app": "pg"}), ("db", {"app": "pg"}), 5432)


def test_the_keda_overlay_scales_each_worker_on_the_queues_it_polls():
    """Backlog, not CPU: one ScaledObject per worker, a trigger per task queue its domains
    poll, on the cluster's frontend and namespace, and no CPU autoscaler left to fight it."""
    from services.worker.domains import polled_queues, select
    from shared.settings import Settings

    docs = build(K8S / "overlays" / "keda")
    assert not _by_kind(docs, "HorizontalPodAutoscaler")
    deployments = _by_kind(docs, "Deployment")
    [config] = [d for d in docs if d["kind"] == "ConfigMap"]
    scaled = _by_kind(docs, "ScaledObject")
    workers = {n: d for n, d in deployments.items() if n.startswith("esteira-worker-")}
    assert set(scaled) == set(workers)
    queues = polled_queues(Settings())
    for name, scaled_object in scaled.items():
        spec = scaled_object["spec"]
        assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                          "name": name}
        assert 1 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]
        [container] = _containers(workers[name])
        domains = select(parse_command(container["args"]).domains)
        assert sorted(t["metadata"]["taskQueue"] for t in spec["triggers"]) \
            == sorted(q.name for q in queues if q.domain in domains), name
        for trigger in spec["triggers"]:
            meta = trigger["metadata"]
            assert trigger["type"] == "temporal"
            assert meta["endpoint"] == config["data"]["TEMPORAL_ADDRESS"]
            assert meta["namespace"] == config["data"]["TEMPORAL_NAMESPACE"]
            assert set(meta["queueTypes"].split(",")) == {"workflow", "activity"}
        assert scaled_object["metadata"]["namespace"] == "esteira"


def test_the_keda_overlay_renders_the_same_with_kustomize_itself():
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl not installed: the overlay is checked with the local renderer only")
    real = subprocess.run([kubectl, "kustomize", str(K8S / "overlays" / "keda")],
                          capture_output=True, text=True, check=True, timeout=120).stdout
    def names(docs) -> list[tuple[str, str, str | None]]:
        # The generated ConfigMap's hash suffix is the renderer's own (compared elsewhere).
        return sorted((d["kind"], d["metadata"]["name"].rsplit("-", 1)[0]
                       if d["kind"] == "ConfigMap" else d["metadata"]["name"],
                       d["metadata"].get("namespace")) for d in docs)

    assert names(d for d in yaml.safe_load_all(real) if d) \
        == names(build(K8S / "overlays" / "keda"))
