"""A real `esteira worker --domains all` in Production: one domain's missing settings don't
take the others down, readiness names it, and a kill -9 of the worker is noticed in seconds."""

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

from activities.signer.contracts.jobs import task_queues
from services.app import create_app
from services.banner_signer import workers_row
from tests.api.conftest import make_context

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def backend() -> str:
    """Domain isolation doesn't depend on the store; one backend keeps this tier quick."""
    return "sqlite"


def _start_worker(settings, temporal_env) -> subprocess.Popen:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ESTEIRA_")},
           "PYTHONPATH": str(REPO), "ESTEIRA_ENVIRONMENT": "Production",
           "ESTEIRA_DATA_DIR": str(settings.data_dir),
           "ESTEIRA_DATABASE_URL": settings.sqlalchemy_url,
           "ESTEIRA_PIPELINE__TASK_QUEUE_SUFFIX": settings.pipeline.task_queue_suffix,
           "ESTEIRA_SISBAJUD__TASK_QUEUE": settings.sisbajud.task_queue,
           # Sweeps are schedules on the shared test server: none from this test.
           "ESTEIRA_PICKUP__SCHEDULES_ENABLED": "false",
           "ESTEIRA_LOGGING__TO_FILE": "false",
           # Production requires a payload key; 32 bytes of zeros, base64.
           "ESTEIRA_PAYLOAD_CODEC__KEYS": "k1:" + "A" * 43 + "=",
           "TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host}
    return subprocess.Popen([sys.executable, "-m", "services.cli", "worker", "--domains", "all"],
                            env=env, cwd=REPO, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def _checks(context) -> tuple[int, dict[str, bool]]:
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as api:
        response = await api.get("/api/ready")
    return response.status_code, {c["name"]: c["ok"] for c in response.json()["checks"]}


async def _until(context, predicate, timeout: float = 60) -> tuple[int, dict[str, bool]]:
    deadline = time.monotonic() + timeout
    while True:
        code, checks = await _checks(context)
        if predicate(checks):
            return code, checks
        assert time.monotonic() < deadline, f"readiness never matched: {code} {checks}"
        await asyncio.sleep(0.5)


async def test_missing_sisbajud_settings_leave_signer_and_pickup_running(settings,
                                                                         temporal_env):
    settings.pipeline.task_queue_suffix = f"-dom-{uuid.uuid4().hex[:8]}"
    settings.sisbajud.task_queue = f"sisbajud-dom-{uuid.uuid4().hex[:8]}"
    context = await make_context(settings, temporal_env)
    settings.readiness.worker_domains = ["signer", "pickup", "sisbajud"]
    settings.temporal.address = temporal_env.client.service_client.config.target_host
    jobs, signing = task_queues(settings.pipeline.task_queue_suffix)
    worker = _start_worker(settings, temporal_env)
    try:
        # The signing queue is polled once the signing pool has started and opened its keys,
        # after the jobs queue: wait for both.
        code, checks = await _until(context, lambda c: c.get(f"worker-poller:{jobs}")
                                    and c.get(f"worker-poller:{signing}")
                                    and c.get("worker-poller:pickup-v1")
                                    and c.get("domain:sisbajud") is False)
        assert worker.poll() is None, "the worker process kept running"
        assert code == 503
        assert checks[f"worker-poller:{signing}"] and checks["domain:signer"]
        assert checks["domain:pickup"]
        assert checks[f"worker-poller:{settings.sisbajud.task_queue}"] is False
        row = await workers_row(settings, context.sessions, context.temporal)
        assert "domain:sisbajud (not started: SISBAJUD executor: set ESTEIRA_SISBAJUD__" in row
        # kill -9: Temporal keeps listing the pollers, the silent instance row tells.
        settings.readiness.poller_stale_seconds = 6
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        killed_at = time.monotonic()
        await _until(context, lambda c: c[f"worker-poller:{jobs}"] is False
                     and c["worker-poller:pickup-v1"] is False, timeout=30)
        assert time.monotonic() - killed_at < 30
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        await context.engine.dispose()
