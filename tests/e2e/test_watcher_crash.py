"""A real watcher process killed (SIGKILL), hung (SIGSTOP) and started again: its folders stop
reading Running and /api/ready's folder-watcher line turns red within the bound, then green."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from activities.signer.operator.folders import silent_after
from services.app import create_app
from tests.api.conftest import API_KEY, make_context

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
POLL_SECONDS = 0.2
# Readiness:PollerStaleSeconds: the folders' bound (it exceeds 3 passes) and the process's.
STALE_SECONDS = 8.0
# A reading may land just before the bound expires, plus a few passes of the poll below.
SLACK_SECONDS = 3.0
AUTH = {"X-API-Key": API_KEY}


class Watcher:
    """`esteira watcher` as its own process, on the test's store and Temporal."""

    def __init__(self, settings, temporal_env) -> None:
        self.env = {**{k: v for k, v in os.environ.items()
                       if not k.startswith(("ESTEIRA_", "TEMPORAL_"))},
                    "PYTHONPATH": str(REPO), "ESTEIRA_DATA_DIR": str(settings.data_dir),
                    "ESTEIRA_DATABASE_URL": settings.sqlalchemy_url,
                    "ESTEIRA_PIPELINE__POLL_INTERVAL_SECONDS": str(POLL_SECONDS),
                    "ESTEIRA_LOGGING__TO_FILE": "false",
                    "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host}
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "services.cli", "watcher"],
                                        env=self.env, cwd=REPO, start_new_session=True,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def signal(self, number: signal.Signals) -> None:
        assert self.process is not None
        os.kill(self.process.pid, number)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.signal(signal.SIGCONT)
            self.signal(signal.SIGKILL)
            self.process.wait()


@pytest.fixture
async def deployment(settings, temporal_env) -> AsyncIterator[tuple[httpx.AsyncClient, Watcher]]:
    context = await make_context(settings, temporal_env)
    # This deployment runs a watcher: its lines gate the verdict.
    settings.readiness.processes = ["watcher"]
    settings.readiness.poller_stale_seconds = STALE_SECONDS
    settings.pipeline.poll_interval_seconds = POLL_SECONDS
    watcher = Watcher(settings, temporal_env)
    transport = httpx.ASGITransport(app=create_app(context))
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as api:
            yield api, watcher
    finally:
        watcher.kill()
        await context.engine.dispose()


async def _reading(api: httpx.AsyncClient) -> tuple[str, int, dict[str, dict]]:
    """The inbox's status, the /api/ready code and its detailed checks by name."""
    [inbox] = (await api.get("/api/folders", headers=AUTH)).json()["items"]
    ready = await api.get("/api/ready/details", headers=AUTH)
    return inbox["status"], ready.status_code, {c["name"]: c for c in ready.json()["checks"]}


async def _until(api: httpx.AsyncClient, status: str, within: float
                 ) -> tuple[float, int, dict[str, dict]]:
    """Seconds until the inbox reads `status` (at most `within`), and readiness then."""
    started = time.monotonic()
    while time.monotonic() - started < within:
        now, code, checks = await _reading(api)
        if now == status:
            return time.monotonic() - started, code, checks
        await asyncio.sleep(0.25)
    raise AssertionError(f"the inbox never read {status} within {within}s (last {now})")


async def _live(api: httpx.AsyncClient) -> None:
    """The watcher passes over the inbox: Running, and both watcher lines green."""
    _, code, checks = await _until(api, "Running", within=60)
    assert checks["folder-watcher:inbox"]["ok"], checks["folder-watcher:inbox"]
    assert checks["folder-watcher:inbox"]["gating"] is True
    assert code == 200 or not checks["process:watcher"]["ok"], checks  # its beat is 5 s apart


async def _silent(api: httpx.AsyncClient, settings) -> None:
    """Within the bound, the inbox reads NoSignal and the folder-watcher line fails /api/ready."""
    bound = silent_after(settings).total_seconds()
    elapsed, code, checks = await _until(api, "NoSignal", within=bound + SLACK_SECONDS)
    assert elapsed <= bound + SLACK_SECONDS
    line = checks["folder-watcher:inbox"]
    assert (code, line["ok"]) == (503, False), checks
    assert "no watcher has scanned this folder" in line["detail"]
    [inbox] = (await api.get("/api/folders", headers=AUTH)).json()["items"]
    assert "dead, hung or stopped" in inbox["lastError"]


async def test_a_killed_or_hung_watcher_stops_reading_running_and_fails_readiness(
        deployment, settings):
    api, watcher = deployment
    status, _, checks = await _reading(api)
    assert status == "NoSignal", "no watcher has run yet: never Running"
    assert checks["folder-watcher:inbox"]["ok"] is False
    watcher.start()
    await _live(api)

    watcher.signal(signal.SIGKILL)
    watcher.process.wait()
    await _silent(api, settings)

    watcher.start()  # started again: Running again
    await _live(api)

    watcher.signal(signal.SIGSTOP)  # hung: alive, but never passes over its folder
    await _silent(api, settings)
    watcher.signal(signal.SIGCONT)
    await _live(api)
