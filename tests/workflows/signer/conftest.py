"""A signer deployment in the test process: real Temporal, real store, real process pool."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from sqlmodel import select
from temporalio.client import Client
from temporalio.worker import Worker

from activities.signer import engine
from activities.signer.contracts.jobs import (
    TERMINAL_STATUSES,
    JobSource,
    job_workflow_id,
    task_queues,
)
from activities.signer.encryption import load_encryption_key
from activities.signer.enqueue import Enqueuer, EnqueueResult
from activities.signer.models.jobs import Job, JobHistory, SigningProfile
from activities.signer.operator import SignerOperations
from activities.signer.pipeline import SigningActivities
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from services.bootstrap import bootstrap
from services.worker.gate import PauseGatedWorker
from services.worker.main import PAUSE_DRAIN, make_worker
from shared.db.engine import create_engine, session_factory
from shared.db.models import OperationalEvent, PipelineState
from shared.settings import Settings
from shared.temporal import TemporalHandle
from shared.worker_shape import DomainWorker
from workflows.signer.job import SigningJobWorkflow


@pytest.fixture(scope="session")
def signing_pool():
    """The production executor: spawned processes with keys cached per process."""
    pool = ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn"))
    yield pool
    pool.shutdown(wait=True, cancel_futures=True)


class HookedExecutor(Executor):
    """Runs `before(fn, request)` in the test process, then delegates to the real pool;
    with `hold` set, signing calls wait (off the event loop) until it is released."""

    def __init__(self, pool: Executor) -> None:
        self.pool = pool
        self.before: Callable[[object, object], None] | None = None
        self.hold: threading.Event | None = None

    def submit(self, fn, /, *args, **kwargs) -> Future:
        if self.before is not None:
            self.before(fn, *args)
        if self.hold is None or fn is not engine.sign:
            return self.pool.submit(fn, *args, **kwargs)
        outer: Future = Future()
        hold = self.hold

        def later() -> None:
            hold.wait(60)
            inner = self.pool.submit(fn, *args, **kwargs)
            inner.add_done_callback(lambda done: outer.set_result(done.result()))

        threading.Thread(target=later, daemon=True).start()
        return outer


@dataclass
class SignerHarness:
    """What a signer test drives: the inbox, the face (and its enqueuer), the store."""

    settings: Settings
    face: SignerOperations
    repository: JobRepository
    storage: StorageTree
    enqueuer: Enqueuer
    client: Client
    executor: HookedExecutor
    activities: SigningActivities
    inbox: Path
    gate: PauseGatedWorker | None = None
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def sessions(self):
        return self.repository.sessions

    def drop(self, name: str, data: bytes) -> Path:
        path = self.inbox / name
        path.write_bytes(data)
        return path

    async def profile(self, name: str = "default") -> SigningProfile:
        profile = await self.repository.profile(name)
        assert profile is not None
        return profile

    async def enqueue(self, path: Path, source: JobSource = JobSource.WATCHER,
                      profile: str = "default") -> EnqueueResult:
        return await self.enqueuer.enqueue(path, source=source, profile=await self.profile(profile),
                                           folder="inbox" if source is not JobSource.UPLOAD
                                           else None)

    async def wait_for(self, job_id: str, statuses=TERMINAL_STATUSES, timeout: float = 60) -> Job:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = await self.repository.get(job_id)
            if job is not None and job.status in statuses:
                return job
            await asyncio.sleep(0.05)
        raise AssertionError(f"job {job_id} did not reach {statuses}: {job and job.status}")

    async def settled(self, job_id: str) -> None:
        """Wait for the job's workflow: the store says Completed before the activity's last
        file step (removing the staged copy) has run; the workflow ends after it."""
        await self.client.get_workflow_handle(job_workflow_id(job_id)).result()

    async def history(self, job_id: str) -> list[JobHistory]:
        async with self.sessions() as session:
            return list((await session.exec(select(JobHistory).where(
                JobHistory.job_id == job_id).order_by(JobHistory.id))).all())

    async def events(self, type: str) -> list[OperationalEvent]:
        async with self.sessions() as session:
            return list((await session.exec(select(OperationalEvent).where(
                OperationalEvent.type == type))).all())

    async def set_paused(self, paused: bool, *, drain: bool = True) -> None:
        """Write the pause row and wait until the gate has followed it (and drained)."""
        rounds = self.gate.rounds
        async with self.sessions() as session:
            state = await session.get(PipelineState, 1) or PipelineState()
            state.paused = paused
            session.add(state)
            await session.commit()
        if paused and not drain:
            # The gate drops its poller before it waits out the drain, and a held in-flight
            # job keeps that wait (and so the gate's next read) open.
            while self.gate.polling:
                await asyncio.sleep(0.02)
            return
        while self.gate.rounds < rounds + 2 or self.gate.polling == paused \
                or (paused and drain and not self.gate.drained):
            await asyncio.sleep(0.02)


@pytest_asyncio.fixture
async def signer(settings: Settings, temporal_env, signing_pool) -> AsyncIterator[SignerHarness]:
    """Bootstrapped store (dev profile on `inbox`) with jobs and signing workers running."""
    settings.pipeline.task_queue_suffix = f"-{uuid.uuid4().hex[:12]}"
    await bootstrap(settings)
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    # The face a door would be handed; its enqueuer turns the test's files into jobs.
    face = SignerOperations(settings, sessions, TemporalHandle.of(temporal_env.client))
    repository = face.repository
    storage = StorageTree(settings.storage_root, read_attempts=2)
    executor = HookedExecutor(signing_pool)
    activities = SigningActivities(repository, storage, executor, instance_id="test-worker",
                                   encryption_key=load_encryption_key(settings))
    jobs_queue, signing_queue = task_queues(settings.pipeline.task_queue_suffix)
    harness = SignerHarness(settings, face, repository, storage, face.enqueuer,
                            temporal_env.client, executor, activities,
                            settings.storage_root / "input" / "inbox")
    signing = DomainWorker(signing_queue, activities=[activities.process_job],
                           max_concurrent_activities=4, pausable=True)
    gate = PauseGatedWorker(lambda: make_worker(temporal_env.client, signing, PAUSE_DRAIN),
                            sessions, poll_seconds=0.1)
    harness.gate = gate
    async with Worker(temporal_env.client, task_queue=jobs_queue,
                      workflows=[SigningJobWorkflow]):
        gate_task = asyncio.create_task(gate.run(harness.stop))
        try:
            yield harness
        finally:
            harness.stop.set()
            await gate_task
    await engine.dispose()
