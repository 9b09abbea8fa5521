"""`esteira dev` started as a user would: ready, usable, stopped cleanly, resumed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from temporalio.client import Client

from services.grpc_server.gen.esteira.v1 import system_pb2, system_pb2_grpc
from shared.contracts.ops import TASK_QUEUE, ProbeResult, RunProbeInput, probe_workflow_id
from shared.settings import Settings
from shared.temporal import data_converter
from tests.support.ports import free_ports

pytestmark = pytest.mark.e2e
ESTEIRA = [sys.executable, "-m", "services.cli"]
READY_TIMEOUT = 120
REPO = Path(__file__).resolve().parents[2]


class DevRun:
    """One `esteira dev` process with its own data directory and ports."""

    def __init__(self, workdir: Path, ports: list[int]) -> None:
        self.workdir = workdir
        self.api, self.grpc, self.temporal, self.ui = ports
        self.output = workdir / f"dev-{time.monotonic_ns()}.log"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ESTEIRA_")}
        self.env.update({
            "ESTEIRA_DATA_DIR": str(workdir / "data"),
            "ESTEIRA_PORTS__API": str(self.api), "ESTEIRA_PORTS__GRPC": str(self.grpc),
            "ESTEIRA_PORTS__TEMPORAL": str(self.temporal),
            "ESTEIRA_PORTS__TEMPORAL_UI": str(self.ui),
            "PYTHONPATH": str(REPO),
            # Each test brings its own files and orders; the first run's demo would add a
            # job, two orders and a school (tests/e2e/test_demo.py runs it on purpose).
            "ESTEIRA_DEMO__ENABLED": "false",
        })
        # The gateway and the simulators listen too: keep them off the default ports.
        self.webhook, self.midaz, self.mensageria, self.turnstile = free_ports(4)
        self.env.update({"ESTEIRA_PORTS__WEBHOOK": str(self.webhook),
                         "ESTEIRA_PORTS__MIDAZ": str(self.midaz),
                         "ESTEIRA_PORTS__MENSAGERIA": str(self.mensageria),
                         "ESTEIRA_PORTS__TURNSTILE": str(self.turnstile)})
        # The SMTP sink of approval e-mails too.
        self.env["ESTEIRA_PORTS__SMTP"] = str(free_ports(1)[0])
        self.env["ESTEIRA_PORTS__LACUNA"] = str(free_ports(1)[0])
        self.process: subprocess.Popen | None = None

    def start(self) -> DevRun:
        with self.output.open("w") as sink:
            self.process = subprocess.Popen([*ESTEIRA, "dev"], cwd=self.workdir, env=self.env,
                                            stdout=sink, stderr=subprocess.STDOUT)
        return self

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            assert self.process and self.process.poll() is None, self.text()
            try:
                url = f"http://127.0.0.1:{self.api}/api/ready"
                if httpx.get(url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail(f"not ready within {READY_TIMEOUT}s:\n{self.text()}")
        # The banner follows readiness by a moment.
        for _ in range(50):
            if "Service ready" in self.text():
                return
            time.sleep(0.1)

    def descendants(self) -> set[int]:
        assert self.process
        found, frontier = set(), {self.process.pid}
        while frontier:
            parent = frontier.pop()
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    try:
                        ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                    except (OSError, IndexError, ValueError):
                        continue
                    if ppid == parent and int(entry.name) not in found:
                        found.add(int(entry.name))
                        frontier.add(int(entry.name))
        return found

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 90) -> int:
        assert self.process
        self.process.send_signal(sig)
        return self.process.wait(timeout)

    def text(self) -> str:
        return self.output.read_text() if self.output.exists() else ""

    def api_key(self) -> str:
        return (self.workdir / "data" / "api-key").read_text().strip()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


async def _run_probe(run: DevRun, workflow_id: str) -> ProbeResult:
    # The workers encrypt with the key `esteira dev` generated: this client reads it too.
    converter = data_converter(Settings(data_dir=run.workdir / "data"))
    client = await Client.connect(f"127.0.0.1:{run.temporal}", data_converter=converter)
    return await client.execute_workflow("ops-probe", RunProbeInput(payload="e2e"),
                                         id=workflow_id, task_queue=TASK_QUEUE,
                                         result_type=ProbeResult,
                                         execution_timeout=timedelta(seconds=60))


def _ui_backend_is_out_of_reach(run: DevRun) -> None:
    """The real UI's port, visible in `ps`, refuses every connection: it listens in the
    server's private network; only the door's Unix socket (0600, 0700 folder) leads there."""
    [command] = [argv for pid in run.descendants()
                  if (argv := _cmdline(pid))[1:3] == ["server", "start-dev"]]
    backend = int(command[command.index("--ui-port") + 1])
    assert backend != run.ui
    for request in (lambda: httpx.get(f"http://127.0.0.1:{backend}/", timeout=5),
                    lambda: httpx.post(f"http://127.0.0.1:{backend}/api/v1/namespaces/"
                                       "default/workflows/any/terminate", json={}, timeout=5)):
        with pytest.raises(httpx.ConnectError):
            request()
    [socket_path] = [Path(arg) for pid in run.descendants() for arg in _cmdline(pid)
                     if arg.endswith("temporal-ui.sock")][:1]
    assert os.stat(socket_path.parent).st_mode & 0o777 == 0o700
    assert os.stat(socket_path).st_mode & 0o777 == 0o600


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return []


def _grpc_checks(run: DevRun) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{run.grpc}") as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        system = system_pb2_grpc.SystemServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            system.GetStatus(system_pb2.GetStatusRequest())
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        status = system.GetStatus(system_pb2.GetStatusRequest(),
                                  metadata=[("x-api-key", run.api_key())])
        assert status.version and status.pipeline_paused is False


async def test_dev_boots_serves_stops_cleanly_and_resumes(tmp_path):
    run = DevRun(tmp_path, free_ports(4)).start()
    try:
        run.wait_ready()
        output = run.text()
        assert "Service ready" in output and "temporal ui" in output
        assert f"http://127.0.0.1:{run.ui}" in output
        assert httpx.get(f"http://127.0.0.1:{run.ui}/", timeout=10).status_code == 200
        ui_settings = httpx.get(f"http://127.0.0.1:{run.ui}/api/v1/settings", timeout=10)
        assert ui_settings.json()["DisableWriteActions"] is True
        # The UI decodes payloads through the API's codec server with the operator's cookie.
        assert ui_settings.json()["Codec"] == {
            **ui_settings.json()["Codec"], "IncludeCredentials": True,
            "Endpoint": f"http://127.0.0.1:{run.api}/api/temporal-codec"}
        assert "payload codec" in output and "AES-256-GCM" in output
        key_file = tmp_path / "data" / "keys" / "temporal-payload.keys"
        assert os.stat(key_file).st_mode & 0o777 == 0o600
        assert key_file.read_text().split(":", 1)[1].strip() not in output
        terminate = httpx.post(f"http://127.0.0.1:{run.ui}/api/v1/namespaces/default/workflows/"
                               "any/terminate", json={}, timeout=10)
        assert terminate.status_code == 403
        assert terminate.json()["code"] == "temporal-ui.read-only"
        _ui_backend_is_out_of_reach(run)

        login = httpx.post(f"http://127.0.0.1:{run.turnstile}/login.fcgi", timeout=10,
                           json={"login": "admin", "password": "admin"})
        assert login.status_code == 200 and "session" in login.json()

        workflow_id = probe_workflow_id(f"e2e-{time.monotonic_ns()}")
        assert (await _run_probe(run, workflow_id)).payload == "e2e"
        _grpc_checks(run)

        status = subprocess.run([*ESTEIRA, "status"], cwd=tmp_path, env=run.env,
                                capture_output=True, text=True, timeout=60)
        assert status.returncode == 0, status.stdout + status.stderr
        for expected in ("Ready", "worker", "api", "grpc", TASK_QUEUE, "running"):
            assert expected in status.stdout

        second = subprocess.run([*ESTEIRA, "dev"], cwd=tmp_path, env=run.env,
                                capture_output=True, text=True, timeout=60)
        assert second.returncode != 0
        assert "Another `esteira dev`" in second.stderr

        key = run.api_key()
        assert os.stat(tmp_path / "data" / "api-key").st_mode & 0o777 == 0o600
        children = run.descendants()
        assert len(children) >= 4
        assert run.stop(signal.SIGTERM) == 0
        time.sleep(0.5)
        assert not [pid for pid in children if _alive(pid)]
        logs = "".join(p.read_text() for p in (tmp_path / "data" / "logs").iterdir())
        assert "Service ready" in logs and "Worker started" in logs
        assert key not in logs and key not in run.text()

        again = DevRun(tmp_path, [run.api, run.grpc, run.temporal, run.ui]).start()
        try:
            again.wait_ready()
            client = await Client.connect(f"127.0.0.1:{again.temporal}")
            described = await client.get_workflow_handle(workflow_id).describe()
            assert described.status is not None and described.status.name == "COMPLETED"
            assert again.api_key() == key
            assert again.stop(signal.SIGINT) == 0
        finally:
            if again.process and again.process.poll() is None:
                again.process.kill()
    finally:
        if run.process and run.process.poll() is None:
            run.process.kill()


def test_port_in_use_is_refused_by_name(tmp_path):
    import socket

    ports = free_ports(4)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", ports[0]))
        taken.listen()
        run = DevRun(tmp_path, ports)
        result = subprocess.run([*ESTEIRA, "dev"], cwd=tmp_path, env=run.env,
                                capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert f"ESTEIRA_PORTS__API={ports[0]}" in result.stderr


def test_invalid_configuration_refuses_to_start(tmp_path):
    env = {**os.environ, "ESTEIRA_PIPELINE__MAX_CONCURRENCY": "zero", "PYTHONPATH": str(REPO)}
    result = subprocess.run([*ESTEIRA, "dev"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert "ESTEIRA_PIPELINE__MAX_CONCURRENCY" in result.stderr
    assert not (tmp_path / "data").exists()


def test_production_refuses_to_start_without_an_api_key(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ESTEIRA_")},
           "ESTEIRA_ENVIRONMENT": "Production", "PYTHONPATH": str(REPO)}
    result = subprocess.run([*ESTEIRA, "dev"], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 1
    [error] = [line for line in result.stderr.splitlines() if "ESTEIRA_API_KEY" in line]
    assert "Production" in error
    assert not (tmp_path / "data" / "api-key").exists(), "Production never generates a key"


def test_the_json_format_holds_for_every_line_of_the_console_and_the_file(tmp_path):
    """Our children's lines, Temporal's (wrapped), the banner, the access log: all JSON."""
    run = DevRun(tmp_path, free_ports(4))
    run.env.update({"ESTEIRA_LOGGING__FORMAT": "json", "ESTEIRA_LOGGING__ACCESS_LOG": "true"})
    run.start()
    try:
        run.wait_ready()
        assert httpx.get(f"http://127.0.0.1:{run.api}/api/jobs?access_token=s3cret-T0ken",
                         headers={"X-API-Key": run.api_key()}, timeout=10).status_code == 200
    finally:
        assert run.stop(signal.SIGTERM) == 0
    logs = [line for path in (tmp_path / "data" / "logs").iterdir()
            for line in path.read_text().splitlines()]
    for source in (run.text().splitlines(), logs):
        assert not [line for line in source if not line.startswith("{")], "not JSON"
        lines = [json.loads(line) for line in source]
        assert any("Service ready" in line["message"] for line in lines)
        processes = {line.get("Process") for line in lines}
        assert {"dev", "api", "worker"} <= processes
    file_lines = [json.loads(line) for line in logs]
    assert "temporal" in {line.get("Process") for line in file_lines}, "wrapped foreign lines"
    [access] = [line for line in file_lines if line["logger"] == "esteira.access"
                and line["RequestPath"].startswith("/api/jobs?")]
    assert access["RequestPath"] == "/api/jobs?access_token=***" and access["StatusCode"] == 200
    assert "s3cret-T0ken" not in "\n".join(logs)
