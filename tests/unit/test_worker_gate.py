"""The pause gate tells its domain each pause-row read; the signer shows it as its gauge."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from activities.signer import engine as signer_engine
from activities.signer.metrics import PIPELINE_PAUSED
from activities.signer.worker import build as build_signer
from services.bootstrap import bootstrap
from services.worker.gate import PauseGatedWorker
from services.worker.main import gate_for, worker_deps
from shared.db.engine import create_engine, session_factory
from shared.db.models import InstanceControl, PipelineState


@pytest.fixture
def backend() -> str:
    """The gate reads one row; one backend keeps this quick."""
    return "sqlite"


class _IdleWorker:
    """Stands in for a Temporal worker: polls nothing until shut down."""

    task_queue = "idle"

    def __init__(self) -> None:
        self._stopped = asyncio.Event()

    async def run(self) -> None:
        await self._stopped.wait()

    async def shutdown(self) -> None:
        self._stopped.set()


async def _until(predicate, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.02)


async def _set_paused(sessions, paused: bool) -> None:
    async with sessions() as session:
        row = await session.get(PipelineState, 1) or PipelineState()
        row.paused, row.version = paused, row.version + 1
        session.add(row)
        await session.commit()


@contextlib.asynccontextmanager
async def _signer_queues(settings):
    """The store's sessions, the signer's queues as a worker builds them, a stop event."""
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    await bootstrap(settings)
    deps = worker_deps(settings, sessions, "t", contextlib.AsyncExitStack())
    stop = asyncio.Event()
    # A worker's build sets its process's key directories: the later tests of this process
    # (keys in temporary directories) must not inherit them.
    directories = signer_engine.key_directories()
    try:
        async with deps.resources:
            yield sessions, await build_signer(deps), stop
    finally:
        signer_engine._KEY_DIRECTORIES = directories
        stop.set()
        await engine.dispose()


async def test_the_signing_gate_sets_the_paused_gauge_on_each_read(settings):
    async with _signer_queues(settings) as (sessions, queues, stop):
        [signing] = [w for w in queues if w.pausable]
        await _set_paused(sessions, True)
        PIPELINE_PAUSED.set(0)
        gate = PauseGatedWorker(_IdleWorker, sessions, 0.01, signing.on_pause_read)
        running = asyncio.create_task(gate.run(stop))
        await _until(lambda: gate.rounds >= 1)
        assert PIPELINE_PAUSED._value.get() == 1 and not gate.polling
        await _set_paused(sessions, False)
        await _until(lambda: gate.polling)
        assert PIPELINE_PAUSED._value.get() == 0
        stop.set()
        await running


async def _stand_down(sessions, name: str, stood_down: bool) -> None:
    async with sessions() as session:
        row = await session.get(InstanceControl, name) or InstanceControl(name=name)
        row.stood_down, row.changed_by = stood_down, "operator:test"
        session.add(row)
        await session.commit()


async def test_the_signer_jobs_queue_stands_down_with_its_instance_but_ignores_the_pause(
        settings):
    """A stood-down instance polls nothing at the Lacuna Signer: its AwaitingSigner checks,
    approvals and job workflows run on the jobs queue, which a pause must not hold."""
    async with _signer_queues(settings) as (sessions, queues, stop):
        [jobs] = [w for w in queues if not w.pausable]
        assert gate_for(None, sessions, settings, jobs) is None, \
            "without Cluster:Enabled there is no stand-down: the jobs queue always polls"
        settings.cluster.enabled, settings.cluster.instance_name = True, "node-a"
        gate = gate_for(None, sessions, settings, jobs)
        gate._make_worker = _IdleWorker
        gate._poll_seconds = 0.01
        await _set_paused(sessions, True)
        running = asyncio.create_task(gate.run(stop))
        await _until(lambda: gate.rounds >= 2)
        assert gate.polling, "a paused pipeline still runs the jobs queue"
        await _stand_down(sessions, "node-a", True)
        await _until(lambda: gate.stood_down and not gate.polling)
        await _stand_down(sessions, "node-a", False)
        await _until(lambda: gate.polling)
        stop.set()
        await running
