"""`docker-compose.yml` really comes up: local images, host network, a dropped PDF signed, a
real Prometheus scraping every container's own ops port, and `down -v` leaves no container,
volume or network behind."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
import yaml

from activities.signer.crypto.samples import make_pdf
from shared.payload_codec import new_key_entry
from tests.deploy.docker_engine import (
    docker,
    owned_by_image_user,
    poll,
    ready_but_for_the_executors_systems,
)
from tests.deploy.targets import COMPOSE_FILE, REPO
from tests.deploy.test_image import TEMPORAL_CLI, pdfsig, signing_pki, sisbajud_settings
from tests.support.ports import free_ports

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]
OVERRIDE = REPO / "deploy" / "compose.test.yml"
POSTGRES_IMAGE = "esteira-test/postgres:15-bookworm"
INBOX = "/var/lib/esteira/data/storage/input/inbox"
# Every process of ours with its own ops port (/metrics, /livez, /readyz), as Compose scrapes.
OPS = ("api", "grpc", "webhook", "watcher", "worker-signer", "worker-sisbajud", "worker-pickup")
LONG_RUNNING = {"postgres", "temporal", *OPS}
HEALTH_CHECKED = LONG_RUNNING
PROMETHEUS_CONFIG = REPO / "deploy" / "prometheus" / "prometheus.yml"
ALERTS = REPO / "deploy" / "prometheus" / "alerts.yml"
PROMETHEUS = shutil.which("prometheus")


def compose_command() -> list[str]:
    """Compose v2 where its plugin is installed, else Debian's v1 `docker-compose`."""
    if docker("compose", "version", check=False).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.skip("no Compose: install docker-compose (scripts/install-system-deps.sh does)")


def engine_objects() -> dict[str, set[str]]:
    """Every container, volume and network the engine holds (anonymous volumes included)."""
    return {kind: set(docker(*command).stdout.decode().split()) for kind, command in {
        "containers": ("ps", "--all", "--quiet", "--no-trunc"),
        "volumes": ("volume", "ls", "--quiet"),
        "networks": ("network", "ls", "--quiet", "--no-trunc")}.items()}


@pytest.fixture(scope="module")
def postgres_image(python_base_image) -> str:
    """PostgreSQL from Debian's package on the local base (the layer cache keeps it)."""
    docker("build", "--network", "host", "--build-arg", f"BASE_IMAGE={python_base_image}",
           "--tag", POSTGRES_IMAGE, str(REPO / "tests" / "deploy" / "images" / "postgres"),
           timeout=900)
    return POSTGRES_IMAGE


class Stack:
    """One compose project from docker-compose.yml plus the local-engine override."""

    def __init__(self, environment: dict[str, str], directory: Path) -> None:
        self.project = f"esteira-test-{uuid.uuid4().hex[:8]}"
        self.environment = environment
        merged = self.render(directory / "compose.yml")
        self.command = [*compose_command(), "--project-name", self.project, "--file", str(merged)]

    def render(self, target: Path) -> Path:
        """The two files merged by Compose itself, minus `ports:` (see deploy/compose.test.yml)."""
        rendered = subprocess.run(
            [*compose_command(), "--file", str(COMPOSE_FILE), "--file", str(OVERRIDE), "config"],
            env=self.environment, cwd=REPO, capture_output=True, text=True, timeout=60)
        assert rendered.returncode == 0, rendered.stderr
        spec = yaml.safe_load(rendered.stdout)
        # Services behind a profile (simulators, the Temporal UI) are never started here; left
        # in, Compose v1 would still create the project's bridge network for them.
        spec["services"] = {name: service for name, service in spec["services"].items()
                            if "profiles" not in service}
        for name, service in spec["services"].items():
            assert service.get("network_mode") == "host", name
            service.pop("ports", None)
        target.touch(mode=0o600)  # it holds the (test) secrets
        target.write_text(yaml.safe_dump(spec, sort_keys=False))
        return target

    def __call__(self, *args: str, timeout: float = 600, stdin: bytes | None = None,
                 check: bool = True) -> subprocess.CompletedProcess[bytes]:
        result = subprocess.run([*self.command, *args], env=self.environment, cwd=REPO,
                                input=stdin, capture_output=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"compose {' '.join(args)} exited {result.returncode}:\n"
                                 f"{result.stderr.decode(errors='replace')[-4000:]}\n"
                                 f"{self.logs()}")
        return result

    def containers(self) -> dict[str, str]:
        """service -> `state health` of each container of the project."""
        ids = docker("ps", "--all", "--quiet", "--filter",
                     f"label=com.docker.compose.project={self.project}").stdout.decode().split()
        states = {}
        for line in docker("inspect", "--format",
                           '{{index .Config.Labels "com.docker.compose.service"}} '
                           "{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}"
                           "{{end}}", *ids).stdout.decode().splitlines() if ids else []:
            service, _, state = line.partition(" ")
            states[service] = state.strip()
        return states

    def logs(self) -> str:
        result = self("logs", "--no-color", "--tail", "25", timeout=60, check=False)
        return result.stdout.decode(errors="replace")[-12000:]


def _ops_name(service: str) -> str:
    """`worker-signer` -> `OPS_WORKER_SIGNER` (ESTEIRA_TEST_PORT_OPS_WORKER_SIGNER)."""
    return "OPS_" + service.upper().replace("-", "_")


@pytest.fixture
def stack(esteira_image, postgres_image, tmp_path):
    """Settings for every `${…}` the two files name: secrets, free ports, the signing keys."""
    tmp_path.chmod(0o755)
    pki = owned_by_image_user(tmp_path / "pki")
    logs = owned_by_image_user(tmp_path / "logs")
    profiles = signing_pki(pki)
    names = ("POSTGRES", "TEMPORAL", "TEMPORAL_HTTP", "TEMPORAL_METRICS", "API", "GRPC",
             "WEBHOOK", "NOBODY", *(_ops_name(service) for service in OPS))
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    inherited = {k: v for k, v in os.environ.items()
                 if not k.startswith(("ESTEIRA_", "TEMPORAL_", "COMPOSE_", "POSTGRES_"))}
    environment = {
        **inherited, "ESTEIRA_IMAGE": esteira_image, "ESTEIRA_TEST_POSTGRES_IMAGE": postgres_image,
        "ESTEIRA_TEST_PKI": str(pki), "ESTEIRA_TEST_LOGS": str(logs),
        "ESTEIRA_TEST_TEMPORAL_CLI": str(TEMPORAL_CLI),
        "ESTEIRA_SIGNING__PROFILES": json.dumps(profiles),
        "POSTGRES_PASSWORD": secrets.token_urlsafe(16),
        "ESTEIRA_API_KEY": secrets.token_urlsafe(32),
        "ESTEIRA_PAYLOAD_CODEC__KEYS": new_key_entry(),
        **{f"ESTEIRA_TEST_PORT_{name}": str(port) for name, port in ports.items()},
        **sisbajud_settings(f"http://127.0.0.1:{ports['NOBODY']}"),
    }
    before = engine_objects()
    stack = Stack(environment, tmp_path)
    stack.api = f"http://127.0.0.1:{ports['API']}"
    stack.ops = {service: ports[_ops_name(service)] for service in OPS}
    stack.temporal_metrics = ports["TEMPORAL_METRICS"]
    stack.headers = {"X-API-Key": environment["ESTEIRA_API_KEY"]}
    try:
        yield stack
    finally:
        stack.before_down = engine_objects()
        stack("down", "--volumes", "--remove-orphans", "--timeout", "20", check=False)
    leftovers = {kind: sorted(now - before[kind]) for kind, now in engine_objects().items()}
    assert leftovers == {"containers": [], "volumes": [], "networks": []}


def test_the_stack_comes_up_signs_a_dropped_pdf_and_goes_down_without_a_trace(stack, tmp_path):
    stack("up", "--detach", "--no-build")
    try:
        poll(lambda: all(stack.containers().get(s) == "running healthy" for s in HEALTH_CHECKED),
             timeout=240, what="the health checks of " + ", ".join(sorted(HEALTH_CHECKED)))
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {stack.containers()}\n{stack.logs()}") from None
    states = stack.containers()
    assert states["migrate"] == "exited", states
    assert {s for s, state in states.items() if state.startswith("running")} == LONG_RUNNING
    # Host network only: compose made no network (no bridge, no private address).
    assert not docker("network", "ls", "--quiet", "--filter",
                      f"label=com.docker.compose.project={stack.project}").stdout.strip()
    # Each container is Ready on its own port; the workers' pollers reach /api/ready's
    # system verdict a moment later.
    try:
        poll(lambda: ready_but_for_the_executors_systems(stack.api), timeout=120,
             what="/api/ready (all but the unreachable executor's systems)")
    except AssertionError as exc:
        details = httpx.get(f"{stack.api}/api/ready/details", headers=stack.headers,
                            timeout=10).text
        raise AssertionError(f"{exc}\n{details}\n{stack.logs()}") from None

    # Dropped into the watcher's inbox on the shared data volume, as an operator would.
    stack("exec", "-T", "watcher", "sh", "-c", f"cat > {INBOX}/relatorio.pdf",
          stdin=make_pdf(), timeout=60)

    def signed() -> dict | None:
        jobs = httpx.get(f"{stack.api}/api/jobs", headers=stack.headers, timeout=10).json()
        done = [j for j in jobs["items"] if j["fileName"] == "relatorio.pdf"
                and j["status"] in ("Completed", "Failed", "Canceled")]
        return done[0] if done else None

    try:
        job = poll(signed, timeout=120, what="the dropped PDF's job to finish")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{stack.logs()}") from None
    assert job["status"] == "Completed", job
    detail = httpx.get(f"{stack.api}/api/jobs/{job['id']}", headers=stack.headers,
                       timeout=10).json()
    output = tmp_path / Path(detail["outputPath"]).name
    output.write_bytes(stack("exec", "-T", "api", "cat", detail["outputPath"],
                             timeout=60).stdout)
    assert output.name == "relatorio.signed.pdf"
    assert "Signature is Valid" in pdfsig(output)
    _prometheus_scrapes_every_process(stack, tmp_path)


def _prometheus_scrapes_every_process(stack, tmp_path: Path) -> None:
    """Debian's Prometheus with deploy/prometheus/prometheus.yml's jobs, its DNS discovery
    swapped for each container's own ops port: every target up, ours and the SDK's series in."""
    assert PROMETHEUS, "Debian's prometheus package (scripts/install-system-deps.sh installs it)"
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    config["rule_files"] = [str(ALERTS)]
    for job in config["scrape_configs"]:
        if job["job_name"] == "esteira":
            [discovery] = job.pop("dns_sd_configs")
            assert set(discovery["names"]) == set(OPS)
            job.pop("relabel_configs")
            job["static_configs"] = [{"targets": [f"127.0.0.1:{stack.ops[name]}"],
                                      "labels": {"component": name}} for name in OPS]
        elif job["job_name"] == "temporal":
            job["static_configs"] = [{"targets": [f"127.0.0.1:{stack.temporal_metrics}"]}]
    path = tmp_path / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    [port] = free_ports(1)
    url = f"http://127.0.0.1:{port}"
    with (tmp_path / "prometheus.log").open("wb") as log:
        server = subprocess.Popen(
            [PROMETHEUS, f"--config.file={path}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        def query(expr: str) -> list[dict] | None:
            try:
                body = httpx.get(f"{url}/api/v1/query", params={"query": expr}, timeout=10).json()
            except (httpx.HTTPError, ValueError):
                return None
            return body["data"]["result"] if body.get("status") == "success" else None

        def all_up() -> dict | None:
            up = {(r["metric"]["job"], r["metric"].get("component", "")): r["value"][1]
                  for r in query("up") or []}
            wanted = {("esteira", name) for name in OPS} | {("temporal", "")}
            return up if set(up) == wanted and set(up.values()) == {"1"} else None

        try:
            poll(all_up, timeout=60, what="every ops port and Temporal's scraped and up")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {query('up')}") from None
        finished = poll(lambda: query("sum(bulksigner_jobs_finished_total)"), timeout=30,
                        what="the finished job counted")
        assert isinstance(finished, list) and float(finished[0]["value"][1]) >= 1
        sdk = poll(lambda: {r["metric"]["component"] for r in query(
            'count by (component) ({__name__=~"temporal_.+", job="esteira"})') or []}
            >= {"worker-signer", "worker-sisbajud", "worker-pickup"} or None, timeout=30,
            what="each worker's Temporal SDK series")
        assert sdk
    finally:
        server.terminate()
        server.wait(timeout=30)
