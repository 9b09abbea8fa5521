"""/api/metrics reads the store and Temporal at scrape time (real app, store and Temporal)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from activities.pickup import metrics as pickup_metrics
from activities.pickup.models import LedgerEntry
from activities.signer.contracts.jobs import task_queues
from activities.signer.health import profile_subject
from activities.signer.health_reporter import finding_key
from activities.signer.metrics import FOLDER_STATUS, PIPELINE_PAUSED
from activities.signer.models.jobs import InputFolderState, SigningProfile
from activities.sisbajud.metrics import ORPHANS_OPEN, OUTBOX_AGE, UNCERTAIN_WRITES
from activities.sisbajud.models import (
    SisbajudHumanDecision,
    SisbajudOrphan,
    SisbajudOutbox,
    SisbajudWrite,
)
from services.api import scrape_refresh
from services.worker.domains import polled_queues
from services.worker.main import make_worker
from shared.db.models import Instance, PipelineState, utcnow
from shared.findings import record_finding
from shared.instances import instance_id
from shared.worker_shape import DomainWorker
from workflows.signer.job import SigningJobWorkflow

REPO_ROOT = Path(__file__).resolve().parents[2]


async def _samples(api) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = await api.get("/api/metrics")
    assert response.status_code == 200
    return _parse(response.text)


def _parse(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            key = (sample.name, tuple(sorted(sample.labels.items())))
            assert key not in samples, f"{key} exposed twice"
            samples[key] = sample.value
    return samples


async def _add(api, *rows) -> None:
    async with api.context.sessions() as session:
        for row in rows:
            session.add(row)
        await session.commit()


async def test_profile_degraded_follows_the_workers_finding(api):
    samples = await _samples(api)
    assert samples[("bulksigner_profile_degraded", (("profile", "default"),))] == 0
    async with api.context.sessions() as session:
        profile = await session.get(SigningProfile, "default")
    await record_finding(api.context.sessions, finding_key("default"), ok=False,
                         detail="DEGRADED: certificate expired", reporter="test-worker",
                         subject=profile_subject(profile))
    samples = await _samples(api)
    assert samples[("bulksigner_profile_degraded", (("profile", "default"),))] == 1
    async with api.context.sessions() as session:  # disabled: no longer judged, no series
        profile = await session.get(SigningProfile, "default")
        profile.enabled = False
        session.add(profile)
        await session.commit()
    samples = await _samples(api)
    assert ("bulksigner_profile_degraded", (("profile", "default"),)) not in samples


async def test_open_human_decisions_are_counted_by_disposition(api):
    key = ("esteira_sisbajud_human_decisions_open", (("disposition", "HELD_MONEY_MOVED"),))
    assert (await _samples(api))[key] == 0
    await _add(api, *(SisbajudHumanDecision(order_id=f"o-{n}", revision=1, reason="r",
                                            disposition="HELD_MONEY_MOVED", created_at=utcnow())
                      for n in range(2)),
               SisbajudHumanDecision(order_id="o-done", revision=1, reason="r",
                                     disposition="HELD_MONEY_MOVED", created_at=utcnow(),
                                     resolved_at=utcnow()))
    assert (await _samples(api))[key] == 2


async def test_task_queue_pollers_are_zero_then_count_a_live_worker(api, monkeypatch):
    monkeypatch.setattr(scrape_refresh, "POLLERS_CACHE_SECONDS", 0.0)
    context = api.context
    context.settings.pipeline.task_queue_suffix = f"-scrape-{uuid.uuid4().hex[:8]}"
    jobs, _ = task_queues(context.settings.pipeline.task_queue_suffix)
    samples = await _samples(api)
    for queue in polled_queues(context.settings):
        assert samples[("esteira_task_queue_pollers", (("task_queue", queue.name),))] == 0
    async with context.sessions() as session:  # the worker instance its heartbeat keeps
        session.add(Instance(instance_id=instance_id("worker"), role="worker", host="h", pid=0,
                             version="t", state="running", started_at=utcnow(),
                             last_seen_at=utcnow()))
        await session.commit()
    worker = make_worker(await context.temporal(),
                         DomainWorker(jobs, workflows=[SigningJobWorkflow], unsandboxed=True))
    key = ("esteira_task_queue_pollers", (("task_queue", jobs),))
    async with worker:
        deadline = time.monotonic() + 20
        while (await _samples(api))[key] < 1:
            assert time.monotonic() < deadline, "the worker's poller never showed"
            await asyncio.sleep(0.2)


async def test_a_scrape_storm_asks_temporal_once(api, monkeypatch):
    calls = []
    real = scrape_refresh.live_pollers

    async def counted(*args, **kwargs):
        calls.append(args[2])
        return await real(*args, **kwargs)

    monkeypatch.setattr(scrape_refresh, "live_pollers", counted)
    for _ in range(5):
        await _samples(api)
    assert sorted(calls) == sorted(q.name for q in polled_queues(api.context.settings))


async def test_standalone_api_serves_the_workers_gauges_from_the_store(api):
    # What this process last heard from a worker (nothing, or stale): the store must win.
    PIPELINE_PAUSED.set(0)
    FOLDER_STATUS.labels(folder="inbox", status="Stopped").set(0)
    UNCERTAIN_WRITES.labels("INDETERMINATE").set(0)
    OUTBOX_AGE.set(0)
    ORPHANS_OPEN.set(0)
    pickup_metrics.set_queue("ledger", pending=0, failed=0, oldest_seconds=0)
    hour_ago = utcnow() - timedelta(hours=1)
    async with api.context.sessions() as session:
        state = await session.get(PipelineState, 1) or PipelineState(id=1)
        state.paused = True
        session.add(state)
        await session.commit()
    await _add(
        api,
        InputFolderState(name="inbox", status="Stopped", last_error="enqueue failed"),
        SisbajudWrite(idempotency_key="k1", order_id="o1", revision=1, kind="block",
                      institution_id="i", block_alias="b", total="1.00",
                      state="INDETERMINATE", created_at=utcnow(), updated_at=utcnow()),
        SisbajudOutbox(idempotency_key="r1", order_id="o1", revision=1, payload={},
                       state="PENDING", created_at=hour_ago, next_attempt_at=hour_ago),
        SisbajudOrphan(operation_id="op1", transaction_id="t1", institution_id="i",
                       block_alias="b", account_id="a", found_at=utcnow()),
        LedgerEntry(controller=1, command="grant", subject_kind="student", subject_id=1,
                    registration="r", idempotency_key="l1", status="failed",
                    created_at=utcnow()),
    )
    samples = await _samples(api)
    assert samples[("bulksigner_pipeline_paused", ())] == 1
    assert samples[("bulksigner_input_folder_status",
                    (("folder", "inbox"), ("status", "Stopped")))] == 1
    assert samples[("bulksigner_input_folder_status",
                    (("folder", "inbox"), ("status", "Running")))] == 0
    assert samples[("esteira_sisbajud_uncertain_writes", (("state", "INDETERMINATE"),))] == 1
    assert samples[("esteira_sisbajud_outbox_depth", ())] == 1
    assert samples[("esteira_sisbajud_outbox_oldest_age_seconds", ())] >= 3600
    assert samples[("esteira_sisbajud_orphan_operations_recorded", ())] == 1
    assert samples[("esteira_pickup_outbound_failed", (("queue", "ledger"),))] == 1


# A worker of `esteira dev` wrote stale values into the shared folder, then the API (another
# process on the same folder) serves a scrape: one series each, the store's value.
_WORKER = """
from activities.pickup import metrics
from activities.signer.metrics import PIPELINE_PAUSED
from activities.sisbajud.metrics import UNCERTAIN_WRITES
PIPELINE_PAUSED.set(1)
UNCERTAIN_WRITES.labels("INDETERMINATE").set(7)
metrics.set_queue("ledger", pending=5, failed=3, oldest_seconds=999)
"""
_API = """
import asyncio, httpx, os, sys
from services.app import create_app
from services.app_context import ApiContext
from shared.temporal import TemporalHandle
from shared.db.engine import create_engine, session_factory
from shared.settings import Settings

async def main():
    settings = Settings(data_dir=sys.argv[1], database_url=os.environ["TEST_DATABASE_URL"])
    engine = create_engine(settings.sqlalchemy_url)

    async def no_temporal():
        raise ConnectionError("no Temporal in this test")

    context = ApiContext.build(settings, engine, api_key="k",
                         temporal=TemporalHandle(no_temporal))
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as api:
        response = await api.get("/api/metrics")
    await engine.dispose()
    assert response.status_code == 200, response.status_code
    sys.stdout.write(response.text)

asyncio.run(main())
"""


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_multiprocess_folder_shows_the_stores_value_once(api, tmp_path):
    folder = tmp_path / "prometheus"
    folder.mkdir()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(folder)}

    def run(code: str, *args: str) -> str:
        done = subprocess.run([sys.executable, "-c", code, *args], cwd=REPO_ROOT, env=env,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    await asyncio.to_thread(run, _WORKER)
    settings = api.context.settings
    env["TEST_DATABASE_URL"] = settings.database_url.get_secret_value()
    samples = _parse(await asyncio.to_thread(run, _API, str(settings.data_dir)))
    assert samples[("bulksigner_pipeline_paused", ())] == 0
    assert samples[("esteira_sisbajud_uncertain_writes", (("state", "INDETERMINATE"),))] == 0
    assert samples[("esteira_pickup_outbound_failed", (("queue", "ledger"),))] == 0
    assert samples[("esteira_pickup_outbound_pending", (("queue", "ledger"),))] == 0
    assert samples[("bulksigner_profile_degraded", (("profile", "default"),))] == 0
    assert samples[("esteira_sisbajud_human_decisions_open",
                    (("disposition", "HELD_MONEY_MOVED"),))] == 0
