"""docker-compose.yml: valid per the Compose schema, and every command, path and secret real."""

from __future__ import annotations

import http.server
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import threading

import jsonschema
import pytest
import yaml

from services.api.routes.system import router as system_router
from services.api.routes.temporal_codec import PREFIX as CODEC_PREFIX
from services.api.routes.temporal_codec import allowed_origins
from services.ops_server import PATHS as OPS_PATHS
from shared.settings import Settings
from tests.deploy.targets import COMPOSE_FILE, REPO, compose, esteira_services, parse_command

# The Compose Specification schema as shipped in docker-compose 1.29.2's wheel
# (compose/config/compose_spec.json), vendored because no registry package ships it alone.
SCHEMA = json.loads((REPO / "tests" / "deploy" / "schemas" / "compose-spec.json").read_text())
OPS_PORT = 9464
SECRETS = ("POSTGRES_PASSWORD", "ESTEIRA_API_KEY", "ESTEIRA_PAYLOAD_CODEC__KEYS",
           "ESTEIRA_SISBAJUD__HUB_WEBHOOK_SECRETS",
           "ESTEIRA_SISBAJUD__MENSAGERIA_CLIENT_ID", "ESTEIRA_SISBAJUD__MENSAGERIA_CLIENT_SECRET")


def _errors(document: dict) -> list[str]:
    validator = jsonschema.Draft201909Validator(SCHEMA)
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(document)]


def test_the_compose_file_is_valid_per_the_compose_schema():
    assert _errors(compose()) == []


def test_the_schema_check_catches_a_misspelt_key():
    spec = compose()
    spec["services"]["api"]["helthcheck"] = spec["services"]["api"].pop("healthcheck")
    assert _errors(spec), "the vendored schema must refuse unknown service keys"


def test_every_esteira_service_runs_a_valid_esteira_command():
    services = esteira_services(compose())
    assert {"migrate", "api", "grpc", "watcher", "webhook", "worker-signer",
            "worker-sisbajud", "worker-pickup"} <= set(services)
    for name, service in services.items():
        parse_command(service["command"])  # raises SystemExit / UnknownDomainError if not
        assert service["build"]["target"] in _dockerfile_stages(), name


def test_the_domain_check_refuses_a_bad_domain():
    from services.worker.domains import UnknownDomainError

    with pytest.raises(UnknownDomainError):
        parse_command(["worker", "--domains", "signer,nope"])


def test_workers_cover_every_domain_and_carry_no_fixed_name_or_port():
    from services.worker.domains import DOMAINS

    workers = {n: s for n, s in esteira_services(compose()).items() if s["command"][0] == "worker"}
    covered = {d for s in workers.values() for d in parse_command(s["command"]).domains.split(",")}
    assert covered == set(DOMAINS)
    for name, service in workers.items():
        # `--scale` refuses services with a container_name or a published host port.
        assert "container_name" not in service and "ports" not in service, name


def test_simulators_start_only_with_their_profile():
    services = esteira_services(compose())
    simulators = {n for n, s in services.items() if s["command"][0] == "simulator"}
    assert simulators == {"midaz-sim", "mensageria-sim", "turnstile-sim", "lacuna-sim"}
    for name, service in services.items():
        assert (service.get("profiles") == ["simulators"]) == (name in simulators), name


def test_health_checks_probe_routes_that_exist():
    paths = {route.path for route in system_router.routes}
    services = compose()["services"]
    # Each container's own readiness on its ops port; /api/ready stays for external monitors.
    for name in ("api", "watcher", "worker-signer", "worker-sisbajud", "worker-pickup"):
        check = " ".join(services[name]["healthcheck"]["test"])
        assert f"127.0.0.1:{OPS_PORT}/readyz" in check and "/readyz" in OPS_PATHS, name
    assert services["api"]["environment"]["ESTEIRA_PORTS__METRICS"] == str(OPS_PORT)
    assert "/api/ready" in paths and "/api/health" in paths
    webhook_check = " ".join(compose()["services"]["webhook"]["healthcheck"]["test"])
    assert "/health" in webhook_check
    gateway_source = (REPO / "services" / "webhook_gateway" / "app.py").read_text()
    assert 'add_api_route("/health"' in gateway_source


def test_services_start_after_the_migration_and_a_healthy_temporal():
    services = esteira_services(compose())
    for name, service in services.items():
        if name == "migrate" or service.get("profiles"):
            continue
        assert service["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        # The namespace step runs after a healthy server, which runs after the schema step.
        assert service["depends_on"]["temporal-namespace"]["condition"] \
            == "service_completed_successfully"
    assert services["migrate"]["restart"] == "no"
    spec = compose()["services"]
    assert spec["temporal-namespace"]["depends_on"]["temporal"]["condition"] == "service_healthy"
    assert spec["temporal"]["depends_on"]["temporal-schema"]["condition"] \
        == "service_completed_successfully"


def test_temporal_is_the_server_image_with_a_schema_step_not_auto_setup():
    spec = compose()["services"]
    images = {name: str(s.get("image", "")) for name, s in spec.items()}
    assert not any("auto-setup" in image for image in images.values())
    assert images["temporal"].startswith("temporalio/server:")
    assert images["temporal-schema"].startswith("temporalio/admin-tools:")
    assert images["temporal-schema"].split(":")[1] == images["temporal"].split(":")[1], \
        "the schema tool of the server's own release"
    for step in ("temporal-schema", "temporal-namespace"):
        script = spec[step]["command"][0].replace("/scripts/", "")
        path = REPO / "deploy" / "docker" / "temporal" / script
        assert subprocess.run(["sh", "-n", str(path)], check=False).returncode == 0, script
    setup = (REPO / "deploy" / "docker" / "temporal" / "setup-schema.sh").read_text()
    for database in ("temporal", "temporal_visibility"):
        assert database in setup
    assert "update-schema" in setup, "an existing volume is upgraded in place"


def test_prometheus_scrapes_every_long_running_service_on_its_ops_port():
    config = yaml.safe_load((REPO / "deploy" / "prometheus" / "prometheus.yml").read_text())
    spec = compose()
    [esteira] = [job for job in config["scrape_configs"] if job["job_name"] == "esteira"]
    [discovery] = esteira["dns_sd_configs"]
    long_running = {name for name, service in esteira_services(spec).items()
                    if name != "migrate" and not service.get("profiles")}
    assert set(discovery["names"]) == long_running
    assert discovery["port"] == OPS_PORT
    [temporal] = [job for job in config["scrape_configs"] if job["job_name"] == "temporal"]
    endpoint = spec["services"]["temporal"]["environment"]["PROMETHEUS_ENDPOINT"]
    assert temporal["static_configs"][0]["targets"] == [f"temporal:{endpoint.split(':')[1]}"]
    mounts = spec["services"]["prometheus"]["volumes"]
    assert "./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro" in mounts
    assert config["rule_files"] == ["/etc/prometheus/alerts.yml"]
    promtool = shutil.which("promtool")
    if promtool:
        checked = subprocess.run([promtool, "check", "config", "--syntax-only",
                                  str(REPO / "deploy" / "prometheus" / "prometheus.yml")],
                                 capture_output=True, text=True, check=False)
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_secrets_come_from_the_environment_and_must_be_set():
    text = COMPOSE_FILE.read_text()
    for name in SECRETS:
        uses = re.findall(r"\$\{" + name + r"(:?[?\-][^}]*)?\}", text)
        assert uses and all(u.startswith(":?") for u in uses), f"{name} must be ${{{name}:?…}}"


def test_logs_go_to_deploy_docker_logs_on_the_host():
    assert (REPO / "deploy" / "docker" / "logs").is_dir()
    for name, service in esteira_services(compose()).items():
        mounts = dict(v.rsplit(":", 1) for v in service["volumes"])
        assert mounts["./deploy/docker/logs"] == "/var/log/esteira", name
    assert "ESTEIRA_LOGGING__DIRECTORY=/var/log/esteira" in (REPO / "Dockerfile").read_text()


# `${NAME:-default}`, `${NAME-default}`, `${NAME}`, `$NAME` as Compose interpolates them.
_VARIABLE = re.compile(r"\$\{(\w+)(?:(:?-)([^}]*))?\}|\$(\w+)")


def _interpolate(value: str, environ: dict[str, str]) -> str:
    def one(match: re.Match) -> str:
        name = match[1] or match[4]
        if match[2] == ":-" and not environ.get(name):
            return match[3]
        if match[2] == "-" and name not in environ:
            return match[3]
        return environ.get(name, "")

    return _VARIABLE.sub(one, value)


def _published(environ: dict[str, str]) -> dict[str, list[str | None]]:
    """Each service's published host addresses (None: every interface of the host)."""
    found: dict[str, list[str | None]] = {}
    for name, service in compose()["services"].items():
        for entry in service.get("ports", []):
            found.setdefault(name, []).append(_host_ip(entry, environ))
    return found


def _host_ip(entry: str | int | dict, environ: dict[str, str]) -> str | None:
    if isinstance(entry, dict):  # long syntax
        return _interpolate(str(entry["host_ip"]), environ) if "host_ip" in entry else None
    spec = _interpolate(str(entry), environ).split("/")[0]
    if spec.startswith("["):  # [::1]:8080:8080
        return spec[1:spec.index("]")]
    parts = spec.split(":")
    # `PORT` or `HOST_PORT:PORT` publish on every interface.
    return parts[0] if len(parts) == 3 else None


def _loopback(address: str | None) -> bool:
    return address is not None and ipaddress.ip_address(address).is_loopback


def test_every_published_port_is_on_loopback_by_default():
    published = _published({})
    assert {"api", "grpc", "webhook", "temporal-ui"} <= set(published)
    for name, addresses in published.items():
        assert all(_loopback(a) for a in addresses), f"{name} publishes on {addresses}"
    # A host network would bypass publishing: the image binds 0.0.0.0 inside.
    for name, service in compose()["services"].items():
        assert service.get("network_mode") != "host", name


def test_publishing_further_is_one_setting_and_the_ui_stays_on_loopback():
    published = _published({"ESTEIRA_PUBLISH_HOST": "0.0.0.0"})
    for name in ("api", "grpc", "webhook"):
        assert published[name] == ["0.0.0.0"], name
    # The Temporal UI has no sign-in: never published beyond this host.
    assert published["temporal-ui"] == ["127.0.0.1"]


def test_the_loopback_check_catches_a_port_on_every_interface():
    for entry in ("8080:8080", "8080", 8080, "0.0.0.0:8080:8080", {"target": 8080}):
        assert not _loopback(_host_ip(entry, {})), entry
    for entry in ("127.0.0.1:1:1", "[::1]:1:1/tcp", {"target": 1, "host_ip": "127.0.0.1"}):
        assert _loopback(_host_ip(entry, {})), entry


def test_docker_compose_itself_renders_loopback_ports():
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.skip("docker-compose is not installed: the file is checked as YAML only")
    environ = {k: v for k, v in os.environ.items() if k != "ESTEIRA_PUBLISH_HOST"}
    environ.update({name: "x" for name in (*SECRETS, "ESTEIRA_SISBAJUD__MENSAGERIA_URL",
                                           "ESTEIRA_SISBAJUD__INSTITUTIONS")})
    rendered = subprocess.run([binary, "-f", str(COMPOSE_FILE), "config"], env=environ,
                              capture_output=True, text=True, timeout=120, check=True).stdout
    ports = re.findall(r"^\s*- (\S+:\d+:\d+\S*)$", rendered, flags=re.MULTILINE)
    assert len(ports) == 5, rendered  # api, grpc, webhook, the Temporal UI, Prometheus
    assert all(_loopback(_host_ip(port, {})) for port in ports), ports


def test_the_temporal_ui_decodes_payloads_through_the_apis_codec_server():
    spec = compose()
    ui = spec["services"]["temporal-ui"]["environment"]
    endpoint = _interpolate(ui["TEMPORAL_CODEC_ENDPOINT"], {})
    api_port = _interpolate(spec["services"]["api"]["ports"][0], {}).split(":")[1]
    assert endpoint == f"http://localhost:{api_port}{CODEC_PREFIX}"
    assert _interpolate(ui["TEMPORAL_CODEC_ENDPOINT"], {
        "ESTEIRA_PUBLIC_URL": "https://esteira.example"}) == f"https://esteira.example{CODEC_PREFIX}"
    # The operator's dashboard session is the credential the browser sends along.
    assert ui["TEMPORAL_CODEC_INCLUDE_CREDENTIALS"] == "true"
    # The API admits the UI's origin, as the operator's browser reaches the published UI.
    ui_port = _interpolate(spec["services"]["temporal-ui"]["ports"][0], {}).split(":")[1]
    ui_url = _interpolate(
        spec["services"]["api"]["environment"]["ESTEIRA_DASHBOARD__TEMPORAL_UI_URL"], {})
    settings = Settings(dashboard={"temporal_ui_url": ui_url}, environment="Production")
    assert f"http://localhost:{ui_port}" in allowed_origins(settings)


def _dockerfile_stages() -> set[str]:
    text = (REPO / "Dockerfile").read_text()
    return set(re.findall(r"^FROM\s+\S+\s+AS\s+(\S+)", text, flags=re.MULTILINE | re.IGNORECASE))


class _Answer(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the status the test chose."""

    status = 200

    def do_GET(self):
        self.send_response(self.status if self.path in ("/readyz", "/health") else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


def _run_check(test: list[str], port_from: int, port_to: int) -> int:
    assert test[0] == "CMD" and test[1] == "python"
    code = test[3].replace(f":{port_from}", f":{port_to}")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                          check=False).returncode


@pytest.mark.parametrize(("service", "port"), [("api", OPS_PORT), ("webhook", 8090),
                                               ("worker-signer", OPS_PORT)])
def test_the_http_health_checks_pass_on_200_and_fail_otherwise(service, port):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    test = compose()["services"][service]["healthcheck"]["test"]
    try:
        _Answer.status = 200
        assert _run_check(test, port, server.server_port) == 0
        _Answer.status = 503
        assert _run_check(test, port, server.server_port) != 0
    finally:
        server.shutdown()


def test_the_grpc_health_check_passes_only_while_serving():
    from concurrent import futures

    import grpc
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    test = compose()["services"]["grpc"]["healthcheck"]["test"]
    try:
        servicer.set("", health_pb2.HealthCheckResponse.SERVING)
        assert _run_check(test, 50051, port) == 0
        servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
        assert _run_check(test, 50051, port) != 0
    finally:
        server.stop(None)
