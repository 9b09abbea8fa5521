"""Each real process's ops port: `/livez` from its own event loop, `/readyz` from its own
store, Temporal and domains, `/metrics` with our series and the Temporal SDK's."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from services.bootstrap import bootstrap
from services.ops_server import OpsServer
from shared.readiness import Probe
from shared.settings import Settings
from shared.temporal import payload_keys
from tests.support.ports import free_ports

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def backend() -> str:
    """Probes don't depend on the store's engine; one backend keeps this tier quick."""
    return "sqlite"


def start(settings: Settings, temporal_address: str, metrics_port: int, *command: str,
          **extra: str) -> subprocess.Popen:
    """`esteira <command>` as its own process, its ops port on `metrics_port`."""
    env = {**{k: v for k, v in os.environ.items()
              if not k.startswith(("ESTEIRA_", "TEMPORAL_"))},
           "PYTHONPATH": str(REPO), "ESTEIRA_DATA_DIR": str(settings.data_dir),
           "ESTEIRA_DATABASE_URL": settings.sqlalchemy_url,
           "ESTEIRA_API_KEY": settings.api_key.get_secret_value(),
           "ESTEIRA_PORTS__METRICS": str(metrics_port),
           "ESTEIRA_PIPELINE__TASK_QUEUE_SUFFIX": settings.pipeline.task_queue_suffix,
           "ESTEIRA_SISBAJUD__TASK_QUEUE": settings.sisbajud.task_queue,
           "ESTEIRA_PICKUP__SCHEDULES_ENABLED": "false",
           "ESTEIRA_LOGGING__TO_FILE": "false",
           "TEMPORAL_ADDRESS": temporal_address, **extra}
    return subprocess.Popen([sys.executable, "-m", "services.cli", *command], env=env,
                            cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


async def until(url: str, process: subprocess.Popen, predicate, timeout: float = 90):
    """The first answer of `url` that `predicate` accepts."""
    deadline = time.monotonic() + timeout
    last: httpx.Response | httpx.HTTPError | None = None
    async with httpx.AsyncClient(timeout=5) as http:
        while time.monotonic() < deadline:
            assert process.poll() is None, f"{url}: the process exited ({process.returncode})"
            try:
                last = await http.get(url)
                if predicate(last):
                    return last
            except httpx.HTTPError as exc:
                last = exc
            await asyncio.sleep(0.2)
    raise AssertionError(f"{url} never matched; last answer {last!r}")


def stop(*processes: subprocess.Popen) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
async def install(settings):
    """A migrated store on queues of this test only."""
    settings.pipeline.task_queue_suffix = f"-ops-{uuid.uuid4().hex[:8]}"
    settings.sisbajud.task_queue = f"sisbajud-ops-{uuid.uuid4().hex[:8]}"
    await bootstrap(settings)
    # The payload key file every process reads, made first as `esteira dev` makes it before
    # any child starts: a Production process never makes one, so started beside a Development
    # one it would race it for the file and exit (2) on a missing key.
    assert payload_keys(settings) is not None
    return settings


def checks(response: httpx.Response) -> dict[str, bool]:
    return {c["name"]: c["ok"] for c in response.json()["checks"]}


async def test_a_pickup_only_install_is_ready_while_the_system_verdict_is_not(
        install, temporal_env):
    """The API pod is Ready on its own store and Temporal, though no signer or SISBAJUD worker
    runs: /api/ready (the seed's whole-system verdict) still says 503 for external monitors."""
    address = temporal_env.client.service_client.config.target_host
    api_port, api_ops, worker_ops = free_ports(3)
    api = start(install, address, api_ops, "api", ESTEIRA_PORTS__API=str(api_port))
    worker = start(install, address, worker_ops, "worker", "--domains", "pickup")
    try:
        ready = await until(f"http://127.0.0.1:{worker_ops}/readyz", worker,
                            lambda r: r.status_code == 200)
        assert checks(ready) == {"operational-store": True, "temporal": True,
                                 "domain:pickup": True, "started": True}
        assert ready.json()["process"] == "worker"
        api_ready = await until(f"http://127.0.0.1:{api_ops}/readyz", api,
                                lambda r: r.status_code == 200)
        assert checks(api_ready) == {"operational-store": True, "temporal": True,
                                     "listening": True, "started": True}
        async with httpx.AsyncClient(timeout=10) as http:
            system = await http.get(f"http://127.0.0.1:{api_port}/api/ready")
            assert system.status_code == 503, "no signer worker polls: the system is not ready"
            assert any(not ok for name, ok in checks(system).items()
                       if name.startswith("worker-poller:"))
            live = await http.get(f"http://127.0.0.1:{worker_ops}/livez")
            assert (live.status_code, live.json()["status"]) == (200, "Alive")
            # The SDK's worker series reach the worker's own endpoint through the bridge
            # (drained every 2 s).
            await until(f"http://127.0.0.1:{worker_ops}/metrics", worker,
                        lambda r: "temporal_num_pollers" in r.text
                        or "temporal_request" in r.text, timeout=30)
            api_metrics = (await http.get(f"http://127.0.0.1:{api_ops}/metrics")).text
            # Read from the store at scrape time, as /api/metrics does.
            assert "bulksigner_queue_depth" in api_metrics
            # Its answers are counted for the 5xx alert; the 503 verdict of /api/ready isn't.
            assert 'esteira_http_responses_total{code="5xx",service="api"}' not in api_metrics
            await http.get(f"http://127.0.0.1:{api_port}/api/health")
            api_metrics = (await http.get(f"http://127.0.0.1:{api_ops}/metrics")).text
            assert 'esteira_http_responses_total{code="2xx",service="api"} 1.0' in api_metrics
            assert (await http.get(f"http://127.0.0.1:{api_ops}/nope")).status_code == 404
            assert (await http.post(f"http://127.0.0.1:{api_ops}/readyz")).status_code == 405
    finally:
        stop(api, worker)


async def test_a_sisbajud_only_worker_is_ready_and_one_whose_domain_failed_is_not(
        install, temporal_env):
    address = temporal_env.client.service_client.config.target_host
    good_ops, bad_ops = free_ports(2)
    good = start(install, address, good_ops, "worker", "--domains", "sisbajud")
    # In Production the SISBAJUD domain has no usable default: it can't start here.
    bad = start(install, address, bad_ops, "worker", "--domains", "sisbajud",
                ESTEIRA_ENVIRONMENT="Production")
    try:
        ready = await until(f"http://127.0.0.1:{good_ops}/readyz", good,
                            lambda r: r.status_code == 200)
        assert checks(ready)["domain:sisbajud"] is True
        unready = await until(f"http://127.0.0.1:{bad_ops}/readyz", bad,
                              lambda r: checks(r).get("started"))
        assert unready.status_code == 503
        assert checks(unready)["domain:sisbajud"] is False
        assert checks(unready)["temporal"] is True
    finally:
        stop(good, bad)


async def test_without_temporal_every_process_is_alive_and_not_ready(install):
    """Liveness never depends on Temporal (a restart would not bring it back); readiness does."""
    dead_temporal, worker_ops, watcher_ops, grpc_ops, grpc_port, hook_ops, hook_port = \
        free_ports(7)
    address = f"127.0.0.1:{dead_temporal}"
    processes = {
        worker_ops: start(install, address, worker_ops, "worker", "--domains", "pickup"),
        watcher_ops: start(install, address, watcher_ops, "watcher"),
        grpc_ops: start(install, address, grpc_ops, "grpc",
                        ESTEIRA_PORTS__GRPC=str(grpc_port)),
        hook_ops: start(install, address, hook_ops, "webhook",
                        ESTEIRA_PORTS__WEBHOOK=str(hook_port)),
    }
    try:
        for port, process in processes.items():
            await until(f"http://127.0.0.1:{port}/livez", process,
                        lambda r: r.status_code == 200)
            unready = await until(f"http://127.0.0.1:{port}/readyz", process,
                                  lambda r: r.status_code in (200, 503))
            if port == hook_ops:
                # The gateway answers from the store alone: it needs no Temporal.
                assert unready.status_code == 200, unready.text
                continue
            assert unready.status_code == 503, (port, unready.text)
            assert checks(unready).get("temporal", False) is False
            metrics = await until(f"http://127.0.0.1:{port}/metrics", process,
                                  lambda r: r.status_code == 200)
            assert metrics.text.startswith("#"), "a Prometheus text exposition"
    finally:
        stop(*processes.values())


async def test_a_hung_event_loop_fails_liveness():
    """`/livez` is answered by the loop it checks: a loop blocked by a stuck call times out."""
    [port] = free_ports(1)
    settings = Settings(ports={"metrics": port})
    loop = asyncio.new_event_loop()
    served = threading.Event()
    ops = OpsServer(settings, "worker")

    async def serve() -> None:
        async with ops:
            served.set()
            await asyncio.sleep(3600)

    ops.watch(Probe("fine", _fine))
    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert served.wait(10)
    url = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(timeout=2) as http:
        assert (await http.get(f"{url}/livez")).status_code == 200
        assert (await http.get(f"{url}/readyz")).status_code == 503, "not started yet"
        ops.started()
        assert (await http.get(f"{url}/readyz")).status_code == 200
        loop.call_soon_threadsafe(time.sleep, 4)  # a synchronous call that never yields
        await asyncio.sleep(0.2)
        with pytest.raises(httpx.TimeoutException):
            await http.get(f"{url}/livez")
        await asyncio.sleep(4)
        assert (await http.get(f"{url}/livez")).status_code == 200, "back once the loop runs"


async def _fine() -> tuple[bool, str]:
    return True, "fine"


def test_the_ops_port_is_off_unless_set():
    assert Settings().ports.metrics is None
    assert Settings(ports={"metrics": 9464}).ports.metrics == 9464
