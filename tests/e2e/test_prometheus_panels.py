"""Every Grafana panel answers: the processes as Compose runs them (each its own process and
ops port), a real Prometheus scraping them with deploy/prometheus/prometheus.yml's jobs, a
document signed, an order executed and a pickup card moved, then each panel's query asked."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleIntervalSpec,
    SchedulePolicy,
    ScheduleSpec,
)

from activities.signer.crypto.samples import make_pdf
from services.bootstrap import bootstrap
from services.dev.temporal_server import find_temporal_cli
from services.search_attributes import dev_server_flags
from services.sisbajud_cli import DEMO_ORDER_ID
from tests.support.ports import free_ports

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]
REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "deploy" / "grafana" / "esteira.json"
COMPOSE_PROMETHEUS = REPO / "deploy" / "prometheus" / "prometheus.yml"
ALERTS = REPO / "deploy" / "prometheus" / "alerts.yml"
PROMETHEUS = shutil.which("prometheus")
# Compose service name -> `esteira` arguments, as docker-compose.yml runs them.
SERVICES = {
    "api": ["api"], "grpc": ["grpc"], "webhook": ["webhook"], "watcher": ["watcher"],
    "worker-signer": ["worker", "--domains", "signer"],
    "worker-sisbajud": ["worker", "--domains", "sisbajud"],
    "worker-pickup": ["worker", "--domains", "pickup,ops"],
}
SIMULATORS = ("midaz", "mensageria", "turnstile")
REFUSED_ORDER = "0190a000-0000-7000-8000-0000000e0422"


@pytest.fixture
def backend() -> str:
    """One SQLite store shared by the processes, as on one host."""
    return "sqlite"


def panel_queries() -> list[tuple[str, str]]:
    """(panel title, PromQL) of every target of every panel of the dashboard."""
    def walk(panels):
        for panel in panels:
            yield panel
            yield from walk(panel.get("panels", []))

    dashboard = json.loads(DASHBOARD.read_text())
    return [(panel["title"], target["expr"]) for panel in walk(dashboard["panels"])
            for target in panel.get("targets", [])]


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
        """A schedule whose runs fall due while the server is down: on its restart the
        scheduler counts them missed (`schedule_missed_catchup_window`, a server series that
        exists only once a miss happened)."""
        client = await self.client()
        await client.create_schedule("panel-test-miss", Schedule(
            action=ScheduleActionStartWorkflow("NoSuchWorkflow", id="panel-test-miss",
                                               task_queue="panel-test-nobody"),
            spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(seconds=1))]),
            policy=SchedulePolicy(catchup_window=timedelta(seconds=10))))
        await asyncio.sleep(2)
        self.stop()
        await asyncio.sleep(11)
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

    def hub_send(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "services.cli", "hub", "send", *args],
                              env=self.env, cwd=REPO, capture_output=True, text=True,
                              timeout=60, check=False)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


def prometheus_config(stack: Stack, temporal: TemporalServer) -> dict:
    """deploy/prometheus/prometheus.yml with its discovery swapped for these loopback ports:
    the same jobs, the same component label, the same rule file, a 1 s interval."""
    config = yaml.safe_load(COMPOSE_PROMETHEUS.read_text())
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    config["rule_files"] = [str(ALERTS)]
    for job in config["scrape_configs"]:
        if job["job_name"] == "esteira":
            [discovery] = job.pop("dns_sd_configs")
            assert set(discovery["names"]) == set(SERVICES)
            job.pop("relabel_configs")
            job["static_configs"] = [{"targets": [f"127.0.0.1:{stack.ops[name]}"],
                                      "labels": {"component": name}}
                                     for name in discovery["names"]]
        elif job["job_name"] == "temporal":
            job["static_configs"] = [{"targets": [f"127.0.0.1:{temporal.metrics_port}"]}]
    return config


@pytest.fixture
def prometheus(tmp_path) -> Iterator[Callable[..., Any]]:
    if PROMETHEUS is None:
        pytest.skip("no prometheus binary (Debian package `prometheus`; "
                    "scripts/install-system-deps.sh installs it)")
    started: list[subprocess.Popen] = []

    def start(config: dict) -> str:
        [port] = free_ports(1)
        path = tmp_path / "prometheus.yml"
        path.write_text(yaml.safe_dump(config))
        log = (tmp_path / "prometheus.log").open("wb")
        started.append(subprocess.Popen(
            [PROMETHEUS, f"--config.file={path}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        return f"http://127.0.0.1:{port}"

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=30)


async def query(http: httpx.AsyncClient, url: str, expr: str) -> list[dict]:
    response = await http.get(f"{url}/api/v1/query", params={"query": expr})
    body = response.json()
    assert body["status"] == "success", (expr, body)
    return body["data"]["result"]


async def sign_a_document(stack: Stack, http: httpx.AsyncClient) -> None:
    inbox = stack.settings.storage_root / "input" / "inbox"
    (inbox / "pagamentos.pdf").write_bytes(make_pdf(20_000))
    key = {"X-API-Key": stack.settings.api_key.get_secret_value()}

    async def completed() -> bool:
        jobs = (await http.get(f"http://127.0.0.1:{stack.api}/api/jobs", headers=key)).json()
        return any(job["status"] == "Completed" for job in jobs["items"])

    await until(completed, "the dropped PDF signed")


async def execute_an_order(stack: Stack, http: httpx.AsyncClient) -> None:
    sent = stack.hub_send()
    assert sent.returncode == 0 and "accepted" in sent.stdout, sent.stdout + sent.stderr
    key = {"X-API-Key": stack.settings.api_key.get_secret_value()}

    async def resolved() -> bool:
        order = await http.get(f"http://127.0.0.1:{stack.api}/api/sisbajud/orders/"
                               f"{DEMO_ORDER_ID}", headers=key)
        return order.status_code == 200 and order.json()["state"] == "RESOLVED"

    await until(resolved, "the demo order executed")
    # Then (the demo order's own fetches done) a notice whose order the Mensageria refuses
    # (a 4xx, not 404/410) is parked with an alarm: the alarms panel has its series.
    fault = await http.post(f"http://127.0.0.1:{stack.sims['mensageria']}/_sim/faults",
                            json={"route": "orders.get", "status": 422})
    assert fault.status_code == 201, fault.text
    parked = stack.hub_send("--order-id", REFUSED_ORDER)
    assert parked.returncode == 0 and "parked" in parked.stdout, parked.stdout + parked.stderr


async def move_a_pickup_card(stack: Stack, http: httpx.AsyncClient) -> None:
    api = f"http://127.0.0.1:{stack.api}/api/pickup"
    key = {"X-API-Key": stack.settings.api_key.get_secret_value()}

    async def ok(method: str, path: str, **kwargs) -> dict:
        response = await http.request(method, f"{api}{path}", **kwargs)
        assert response.status_code in (200, 201), (path, response.text)
        return response.json()

    school = await ok("POST", "/schools", headers=key, json={
        "name": "Escola", "turnstileUrl": f"http://127.0.0.1:{stack.sims['turnstile']}"})
    # The student's own badge: a READY grant holds it (no credential, no grant to deliver).
    student = await ok("POST", "/students", headers=key,
                       json={"schoolId": school["id"], "name": "Ana", "cardValue": 7_000_001})
    guardian = await ok("POST", "/guardians", headers=key, json={"name": "Maria"})
    await ok("POST", "/links", headers=key, json={
        "studentId": student["id"], "guardianId": guardian["id"], "kind": "permanent"})
    token = (await ok("POST", f"/guardians/{guardian['id']}/tokens", headers=key,
                      json={}))["token"]
    await ok("POST", "/guardian/arrivals", headers={"Authorization": f"Bearer {token}"},
             json={"studentIds": [student["id"]]})
    await ok("POST", f"/students/{student['id']}/ready", headers=key, json={"version": 1})

    async def attempted() -> bool:
        ledger = await ok("GET", "/ledger", headers=key)
        return any(entry.get("attempts", 0) > 0 or entry.get("status") != "pending"
                   for entry in ledger["items"])

    await until(attempted, "the grant delivered to the turnstile")


async def until(predicate, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.5)


async def test_every_grafana_panel_returns_series_from_the_scraped_processes(
        settings, tmp_path, prometheus):
    settings.pipeline.task_queue_suffix = f"-panels-{uuid.uuid4().hex[:6]}"
    temporal = TemporalServer(tmp_path)
    temporal.start()
    stack = Stack(settings, temporal, tmp_path)
    try:
        await temporal.miss_a_catchup_window()
        settings.temporal.address = temporal.address
        await bootstrap(settings)
        stack.start_all()
        url = prometheus(prometheus_config(stack, temporal))
        await stack.wait_ready()
        async with httpx.AsyncClient(timeout=15) as http:
            await sign_a_document(stack, http)
            await execute_an_order(stack, http)
            await move_a_pickup_card(stack, http)
            # Every process is a target of its own, and each is up.
            up = {r["metric"]["component"]: r["value"][1]
                  for r in await query(http, url, 'up{job="esteira"}')}
            assert up == dict.fromkeys(SERVICES, "1"), up
            empty: list[str] = []
            deadline = time.monotonic() + 90
            while True:
                empty = [f"{title}: {expr}" for title, expr in panel_queries()
                         if not await query(http, url, expr)]
                if not empty or time.monotonic() > deadline:
                    break
                await asyncio.sleep(2)
            assert not empty, "panels without series:\n" + "\n".join(empty)
            # The alert rules loaded as Compose's Prometheus loads them.
            rules = (await http.get(f"{url}/api/v1/rules")).json()["data"]["groups"]
            assert {r["name"] for g in rules for r in g["rules"]} >= {
                "EsteiraWorkflowTaskFailures", "EsteiraJobFailureRate", "EsteiraHttp5xxRate"}
    finally:
        stack.stop()
        temporal.stop()
