"""`docker-compose.yml` really comes up: local images, host network, the simulators profile's
Midaz, Mensageria and turnstile; a dropped PDF signed, a court order executed, a pickup card
moved; a real Prometheus scraping every container's own ops port has a series for every
Grafana panel; and `down -v` leaves no container, volume or network behind."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time
from pathlib import Path

import httpx
import pytest

from activities.signer.crypto.samples import make_pdf
from shared.payload_codec import new_key_entry
from tests.deploy.compose_stack import OPS, SIMULATORS, Stack, engine_objects, ops_name
from tests.deploy.docker_engine import docker, owned_by_image_user, poll
from tests.deploy.targets import REPO
from tests.deploy.test_image import TEMPORAL_CLI, pdfsig, signing_pki, sisbajud_settings
from tests.support.grafana_panels import REQUIRED_RULES, Prometheus, scrape_config
from tests.support.panel_traffic import (
    OUTAGE_SECONDS,
    execute_an_order,
    move_a_pickup_card,
    schedule_a_run_every_second,
)
from tests.support.ports import free_ports

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]
POSTGRES_IMAGE = "esteira-test/postgres:15-bookworm"
INBOX = "/var/lib/esteira/data/storage/input/inbox"
LONG_RUNNING = {"postgres", "temporal", *OPS, *SIMULATORS}
HEALTH_CHECKED = LONG_RUNNING
WORKERS = {"worker-signer", "worker-sisbajud", "worker-pickup"}


@pytest.fixture(scope="module")
def postgres_image(python_base_image) -> str:
    """PostgreSQL from Debian's package on the local base (the layer cache keeps it)."""
    docker("build", "--network", "host", "--build-arg", f"BASE_IMAGE={python_base_image}",
           "--tag", POSTGRES_IMAGE, str(REPO / "tests" / "deploy" / "images" / "postgres"),
           timeout=900)
    return POSTGRES_IMAGE


def executor_settings(midaz: str, mensageria: str) -> dict[str, str]:
    """The executor's production settings, its institution's ledger and the Mensageria on
    the simulators (which accept the clients configured here)."""
    executor = sisbajud_settings(mensageria)
    [institution] = json.loads(executor["ESTEIRA_SISBAJUD__INSTITUTIONS"])
    executor["ESTEIRA_SISBAJUD__INSTITUTIONS"] = json.dumps([{**institution, "base_url": midaz}])
    return executor


@pytest.fixture
def stack(esteira_image, postgres_image, tmp_path):
    """Settings for every `${…}` the two files name: secrets, free ports, the signing keys."""
    tmp_path.chmod(0o755)
    pki = owned_by_image_user(tmp_path / "pki")
    logs = owned_by_image_user(tmp_path / "logs")
    profiles = signing_pki(pki)
    names = ("POSTGRES", "TEMPORAL", "TEMPORAL_HTTP", "TEMPORAL_METRICS", "API", "GRPC",
             "WEBHOOK", *SIMULATORS.values(), *(ops_name(service) for service in OPS))
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    sims = {name: f"http://127.0.0.1:{ports[port]}" for name, port in SIMULATORS.items()}
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
        **executor_settings(sims["midaz-sim"], sims["mensageria-sim"]),
    }
    before = engine_objects()
    stack = Stack(environment, tmp_path)
    stack.api = f"http://127.0.0.1:{ports['API']}"
    stack.api_key = environment["ESTEIRA_API_KEY"]
    stack.sims = sims
    stack.ops = {service: ports[ops_name(service)] for service in OPS}
    stack.temporal = f"127.0.0.1:{ports['TEMPORAL']}"
    stack.temporal_metrics = ports["TEMPORAL_METRICS"]
    stack.headers = {"X-API-Key": stack.api_key}
    try:
        yield stack
    finally:
        stack.before_down = engine_objects()
        stack("down", "--volumes", "--remove-orphans", "--timeout", "20", check=False)
    leftovers = {kind: sorted(now - before[kind]) for kind, now in engine_objects().items()}
    assert leftovers == {"containers": [], "volumes": [], "networks": []}


def test_the_stack_comes_up_does_each_domains_work_has_every_panel_and_goes_down_clean(
        stack, tmp_path):
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
    _system_ready(stack)
    _temporal_away_past_a_catchup_window(stack)

    config = scrape_config(stack.ops, stack.temporal_metrics)
    with Prometheus(config, tmp_path) as prometheus:
        # Dropped into the watcher's inbox on the shared data volume, as an operator would;
        # it signs while the order and the card go through.
        stack("exec", "-T", "watcher", "sh", "-c", f"cat > {INBOX}/relatorio.pdf",
              stdin=make_pdf(), timeout=60)
        try:
            execute_an_order(stack.api, stack.api_key, stack.sims["mensageria-sim"],
                             stack.hub_send)
            move_a_pickup_card(stack.api, stack.api_key, stack.sims["turnstile-sim"])
            _the_dropped_pdf_signed(stack, tmp_path)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{stack.logs()}") from None
        _every_panel_has_series(stack, prometheus)


def _system_ready(stack: Stack) -> None:
    """`/api/ready`, the whole system's verdict: each container is Ready on its own port, the
    workers' pollers and the executor's boot check of the simulators follow a moment later."""
    def ready() -> bool:
        try:
            return httpx.get(f"{stack.api}/api/ready", timeout=10).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        poll(ready, timeout=120, what="/api/ready")
    except AssertionError as exc:
        details = httpx.get(f"{stack.api}/api/ready/details", headers=stack.headers,
                            timeout=10).text
        raise AssertionError(f"{exc}\n{details}\n{stack.logs()}") from None


def _temporal_away_past_a_catchup_window(stack: Stack) -> None:
    """A schedule's runs fall due while the Temporal container is frozen (`pause`: its
    in-memory state survives, unlike a restart): the scheduler counts them missed, the
    one way the "missed their catch-up window" panel gets its series."""
    asyncio.run(schedule_a_run_every_second(stack.temporal))
    stack("pause", "temporal")
    try:
        time.sleep(OUTAGE_SECONDS)
    finally:
        stack("unpause", "temporal")
    _system_ready(stack)


def _the_dropped_pdf_signed(stack: Stack, tmp_path: Path) -> None:
    def signed() -> dict | None:
        jobs = httpx.get(f"{stack.api}/api/jobs", headers=stack.headers, timeout=10).json()
        done = [j for j in jobs["items"] if j["fileName"] == "relatorio.pdf"
                and j["status"] in ("Completed", "Failed", "Canceled")]
        return done[0] if done else None

    job = poll(signed, timeout=120, what="the dropped PDF's job to finish")
    assert isinstance(job, dict) and job["status"] == "Completed", job
    detail = httpx.get(f"{stack.api}/api/jobs/{job['id']}", headers=stack.headers,
                       timeout=10).json()
    output = tmp_path / Path(detail["outputPath"]).name
    output.write_bytes(stack("exec", "-T", "api", "cat", detail["outputPath"],
                             timeout=60).stdout)
    assert output.name == "relatorio.signed.pdf"
    assert "Signature is Valid" in pdfsig(output)


def _every_panel_has_series(stack: Stack, prometheus: Prometheus) -> None:
    """deploy/prometheus/prometheus.yml's jobs (DNS discovery swapped for each container's
    ops port): every target up, each worker's SDK series in, every panel's query answered,
    the alert rules loaded."""
    try:
        prometheus.wait_all_up({("esteira", name) for name in OPS} | {("temporal", "")})
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{stack.logs()}") from None
    sdk = poll(lambda: {r["metric"]["component"] for r in prometheus.query(
        'count by (component) ({__name__=~"temporal_.+", job="esteira"})') or []} >= WORKERS,
        timeout=30, what="each worker's Temporal SDK series")
    assert sdk
    empty = prometheus.panels_without_series()
    assert not empty, "panels without series:\n" + "\n".join(empty)
    assert prometheus.rule_names() >= REQUIRED_RULES
