"""Readiness requires a live worker on each required domain's task queues (real Temporal)."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import timedelta

import httpx
import pytest
from temporalio import activity

from activities.signer.contracts.jobs import task_queues
from activities.signer.models.jobs import InputFolderState
from services.app import create_app
from services.status import print_status
from services.worker.main import make_worker
from shared.db.models import Instance, PipelineState, utcnow
from shared.instances import instance_id
from shared.worker_shape import DomainWorker
from tests.api.conftest import make_context
from tests.support.ports import free_ports
from workflows.signer.job import SigningJobWorkflow


@activity.defn(name="signer-process-job")
async def _never_called(_request: dict) -> dict:
    raise AssertionError("no job is enqueued in these tests")


@pytest.fixture
def context_factory(settings, temporal_env):
    settings.pipeline.task_queue_suffix = f"-ready-{uuid.uuid4().hex[:8]}"

    async def make():
        context = await make_context(settings, temporal_env)
        settings.readiness.worker_domains = ["signer"]
        return context

    return make


async def _ready(context) -> tuple[int, dict[str, bool]]:
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as api:
        response = await api.get("/api/ready")
    return response.status_code, {c["name"]: c["ok"] for c in response.json()["checks"]}


async def _until(context, status: int, timeout: float = 20) -> dict[str, bool]:
    deadline = time.monotonic() + timeout
    while True:
        code, checks = await _ready(context)
        if code == status:
            return checks
        assert time.monotonic() < deadline, f"/api/ready stayed {code}: {checks}"
        await asyncio.sleep(0.2)


async def _alive(context, *, seen_ago: timedelta = timedelta(0)) -> None:
    """This process's worker instance row, as its heartbeat keeps it, and a watcher's fresh
    pass over the inbox (the signer domain needs a live watcher too)."""
    async with context.sessions() as session:
        await session.merge(InputFolderState(name="inbox", status="Running",
                                             last_scan_at=utcnow()))
        ident = instance_id("worker")
        row = await session.get(Instance, ident) or Instance(
            instance_id=ident, role="worker", host="h", pid=0, version="t", state="running",
            started_at=utcnow(), last_seen_at=utcnow())
        row.last_seen_at = utcnow() - seen_ago
        session.add(row)
        await session.commit()


async def _workers(context):
    jobs, signing = task_queues(context.settings.pipeline.task_queue_suffix)
    client = await context.temporal()
    return (make_worker(client, DomainWorker(jobs, workflows=[SigningJobWorkflow],
                                             unsandboxed=True)),
            make_worker(client, DomainWorker(signing, activities=[_never_called])))


async def test_no_worker_polling_fails_readiness_naming_each_queue(context_factory):
    context = await context_factory()
    jobs, signing = task_queues(context.settings.pipeline.task_queue_suffix)
    code, checks = await _ready(context)
    assert code == 503
    assert checks[f"worker-poller:{jobs}"] is False
    assert checks[f"worker-poller:{signing}"] is False
    await context.engine.dispose()


async def test_a_live_worker_makes_it_ready_and_a_silent_one_does_not(context_factory):
    context = await context_factory()
    await context.temporal()
    await _alive(context)
    jobs_worker, signing_worker = await _workers(context)
    async with jobs_worker, signing_worker:
        checks = await _until(context, 200)
        assert all(checks.values()), checks
        # Killed without a word: Temporal still lists its pollers for a minute, but its
        # instance row went quiet, so readiness drops within Readiness:PollerStaleSeconds.
        await _alive(context, seen_ago=timedelta(
            seconds=context.settings.readiness.poller_stale_seconds + 1))
        code, checks = await _ready(context)
    assert code == 503
    jobs, _ = task_queues(context.settings.pipeline.task_queue_suffix)
    assert checks[f"worker-poller:{jobs}"] is False
    await context.engine.dispose()


async def test_a_paused_pipeline_expects_no_signing_poller(context_factory):
    context = await context_factory()
    await context.temporal()
    await _alive(context)
    _, signing = task_queues(context.settings.pipeline.task_queue_suffix)
    async with context.sessions() as session:
        state = await session.get(PipelineState, 1) or PipelineState(id=1)
        state.paused, state.reason, state.changed_by = True, "test", "t"
        state.changed_at, state.version = utcnow() - timedelta(minutes=5), state.version + 1
        session.add(state)
        await session.commit()
    jobs_worker, _ = await _workers(context)
    async with jobs_worker:  # the gate stopped the signing worker: only jobs are polled
        checks = await _until(context, 200)
        assert checks[f"worker-poller:{signing}"] is True
        async with context.sessions() as session:
            state = await session.get(PipelineState, 1)
            state.paused = False
            session.add(state)
            await session.commit()
        code, checks = await _ready(context)
    assert code == 503, "running, long since changed, and nothing polls the signing queue"
    assert checks[f"worker-poller:{signing}"] is False
    async with context.sessions() as session:  # a resume this instant: the gate is starting
        state = await session.get(PipelineState, 1)
        state.changed_at, state.version = utcnow(), state.version + 1
        session.add(state)
        await session.commit()
    _, checks = await _ready(context)
    assert checks[f"worker-poller:{signing}"] is True
    await context.engine.dispose()


async def test_status_names_the_queue_no_worker_polls(context_factory, temporal_env, capsys):
    context = await context_factory()
    settings = context.settings
    settings.temporal.address = temporal_env.client.service_client.config.target_host
    [settings.ports.api] = free_ports(1)
    jobs, _ = task_queues(settings.pipeline.task_queue_suffix)
    assert await print_status(settings) == 1
    assert f"Workers       FAILING worker-poller:{jobs}: no live worker polls" in \
        capsys.readouterr().out
    await context.engine.dispose()
