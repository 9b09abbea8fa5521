"""Every Grafana panel answers: the processes as Compose runs them (each its own process and
ops port), a real Prometheus scraping them with deploy/prometheus/prometheus.yml's jobs, a
document signed, an order executed and a pickup card moved, then each panel's query asked."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from temporalio.client import Client

from activities.signer.crypto.samples import make_pdf
from services.bootstrap import bootstrap
from services.dev.temporal_server import find_temporal_cli
from services.search_attributes import dev_server_flags
from tests.support.grafana_panels import (
    INSTALL_HINT,
    PROMETHEUS,
    REQUIRED_RULES,
    Prometheus,
    scrape_config,
)
from tests.support.panel_traffic import (
    OUTAGE_SECONDS,
    execute_an_order,
    move_a_pickup_card,
    schedule_a_run_every_second,
    until,
)
from tests.support.ports import free_ports

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
REPO = Path(__file__).resolve().parents[2]
# Compose service name -> `esteira` arguments, as docker-compose.yml runs them.
SERVICES = {
    "api": ["api"], "grpc": ["grpc"], "webhook": ["webhook"], "watcher": ["watcher"],
    "worker-signer": ["worker", "--domains", "signer"],
    "worker-sisbajud": ["worker", "--domains", "sisbajud"],
    "worker-pickup": ["worker", "--domains", "pickup,ops"],
}
SIMULATORS = ("midaz", "mensageria", "turnstile")


@pytest.fixture
def backend() -> str:
    """One SQLite store shared by the processes, as on one host."""
    return "sqlite"


class TemporalServer:
    """Temporal's dev server on a file, exporting its own metrics (the Compose server does)."""

    def __init__(self, tmp: Path) -> None:
        self.port, self.http_port, self.metrics_port = free_ports(3)
        self.db = tmp / "temporal.db"
        self.process: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [find_temporal_cli(), "server", "start-dev", "--headless", "--ip", "127.0.0.1",
             "--port", str(self.port), "--http-port", str(self.http_port),
             "--metrics-port", str(self.metrics_port), "--db-filename", str(self.db),
             "--log-level", "error", *dev_server_flags()],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    async def client(self) -> Client:
        for _ in range(300):
            try:
                return await Client.connect(self.address)
            except RuntimeError:
                await asyncio.sleep(0.1)
        raise AssertionError("the Temporal dev server never answered")

    async def miss_a_catchup_window(self) -> None:
        """A schedule's runs fall due while the server is down: on its restart the scheduler
        counts them missed."""
        await schedule_a_run_every_second(self.address)
        self.stop()
        await asyncio.sleep(OUTAGE_SECONDS)
        self.start()
        await self.client()


class Stack:
    """The Compose services as local processes, each with its own ops port."""

    def __init__(self, settings, temporal: TemporalServer, tmp: Path) -> None:
        self.settings, self.temporal, self.tmp = settings, temporal, tmp
        self.ops = dict(zip(SERVICES, free_ports(len(SERVICES)), strict=True))
        self.api, self.grpc, self.webhook, *sims = free_ports(3 + len(SIMULATORS))
        self.sims = dict(zip(SIMULATORS, sims, strict=True))
        self.processes: dict[str, subprocess.Popen] = {}
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("ESTEIRA_", "TEMPORAL_"))},
            "PYTHONPATH": str(REPO), "ESTEIRA_ENVIRONMENT": "Development",
            "ESTEIRA_DATA_DIR": str(settings.data_dir),
            "ESTEIRA_DATABASE_URL": settings.sqlalchemy_url,
            "ESTEIRA_API_KEY": settings.api_key.get_secret_value(),
            "ESTEIRA_PORTS__API": str(self.api), "ESTEIRA_PORTS__GRPC": str(self.grpc),
            "ESTEIRA_PORTS__WEBHOOK": str(self.webhook),
            **{f"ESTEIRA_PORTS__{name.upper()}": str(port) for name, port in self.sims.items()},
            "ESTEIRA_PIPELINE__POLL_INTERVAL_SECONDS": "0.2",
            "ESTEIRA_PIPELINE__STABILITY_WINDOW_SECONDS": "0.5",
            "ESTEIRA_SISBAJUD__TICK_EVERY_SECONDS": "1",
            "ESTEIRA_LOGGING__TO_FILE": "false",
            "TEMPORAL_ADDRESS": temporal.address,
        }

    def start(self, name: str, args: list[str], **extra: str) -> None:
        log = (self.tmp / f"{name}.log").open("wb")
        self.processes[name] = subprocess.Popen(
            [sys.executable, "-m", "services.cli", *args], env={**self.env, **extra}, cwd=REPO,
            start_new_session=True, stdout=log, stderr=subprocess.STDOUT)

    def start_all(self) -> None:
        for name in SIMULATORS:
            self.start(f"{name}-sim", ["simulator", name])
        for name, args in SERVICES.items():
            self.start(name, args, ESTEIRA_PORTS__METRICS=str(self.ops[name]))

    async def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        pending = dict(self.ops)
        async with httpx.AsyncClient(timeout=5) as http:
            while pending:
                for name, port in list(pending.items()):
                    process = self.processes[name]
                    assert process.poll() is None, f"{name} exited: {self.log_tail(name)}"
                    try:
                        if (await http.get(f"http://127.0.0.1:{port}/readyz")).status_code == 200:
                            del pending[name]
                    except httpx.HTTPError:
                        pass
                assert time.monotonic() < deadline, f"never ready: {sorted(pending)}"
                await asyncio.sleep(0.3)

    def log_tail(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text(errors="replace")[-3000:]

    def hub_send(self, *args: str) -> tuple[int, str]:
        sent = subprocess.run([sys.executable, "-m", "services.cli", "hub", "send", *args],
                              env=self.env, cwd=REPO, capture_output=True, text=True,
                              timeout=60, check=False)
        return sent.returncode, sent.stdout + sent.stderr

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture
def prometheus_binary() -> None:
    if PROMETHEUS is None:
        pytest.skip(f"no prometheus binary ({INSTALL_HINT})")


def sign_a_document(stack: Stack) -> None:
    (stack.settings.storage_root / "input" / "inbox" / "pagamentos.pdf").write_bytes(
        make_pdf(20_000))
    key = {"X-API-Key": stack.settings.api_key.get_secret_value()}
    until(lambda: any(job["status"] == "Completed" for job in httpx.get(
        f"http://127.0.0.1:{stack.api}/api/jobs", headers=key, timeout=10).json()["items"]),
        "the dropped PDF signed")


async def test_every_grafana_panel_returns_series_from_the_scraped_processes(
        settings, tmp_path, prometheus_binary):
    settings.pipeline.task_queue_suffix = f"-panels-{uuid.uuid4().hex[:6]}"
    temporal = TemporalServer(tmp_path)
    temporal.start()
    stack = Stack(settings, temporal, tmp_path)
    try:
        await temporal.miss_a_catchup_window()
        settings.temporal.address = temporal.address
        await bootstrap(settings)
        stack.start_all()
        with Prometheus(scrape_config(stack.ops, temporal.metrics_port), tmp_path) as server:
            await stack.wait_ready()
            api, key = f"http://127.0.0.1:{stack.api}", settings.api_key.get_secret_value()
            sign_a_document(stack)
            execute_an_order(api, key, f"http://127.0.0.1:{stack.sims['mensageria']}",
                             stack.hub_send)
            move_a_pickup_card(api, key, f"http://127.0.0.1:{stack.sims['turnstile']}")
            # Every process is a target of its own, and each is up.
            server.wait_all_up({("esteira", name) for name in SERVICES} | {("temporal", "")})
            empty = server.panels_without_series()
            assert not empty, "panels without series:\n" + "\n".join(empty)
            assert server.rule_names() >= REQUIRED_RULES
    finally:
        stack.stop()
        temporal.stop()
