"""Stand down one instance of two: it claims nothing new, finishes what it holds; resume."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from temporalio.client import Client

from activities.signer.contracts.jobs import JobStatus, job_workflow_id, task_queues
from activities.signer.crypto.samples import make_pdf
from activities.signer.pipeline import SigningActivities
from services.worker.gate import PauseGatedWorker
from services.worker.main import PAUSE_DRAIN, make_worker
from services.worker.stand_down import STOOD_DOWN, StandDownRefusal
from shared.db.engine import create_engine, session_factory
from shared.db.models import Instance
from shared.worker_shape import DomainWorker


async def _until(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not await predicate():
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.05)


class _Instance:
    """One cluster instance's signing worker behind its gate (and its stand-down refusal)."""

    def __init__(self, signer, name: str, client: Client) -> None:
        self.name = name
        self.ident = f"{name}:worker:1"
        activities = SigningActivities(signer.repository, signer.storage, signer.executor,
                                       instance_id=self.ident, encryption_key=None)
        _, queue = task_queues(signer.settings.pipeline.task_queue_suffix)
        worker = DomainWorker(queue, activities=[activities.process_job],
                              max_concurrent_activities=2, pausable=True)
        refusal = [StandDownRefusal(signer.sessions, name)]
        self.gate = PauseGatedWorker(lambda: make_worker(client, worker, PAUSE_DRAIN, refusal),
                                     signer.sessions, poll_seconds=0.1, instance=name)
        self.stop = asyncio.Event()
        self.task: asyncio.Task | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self.gate.run(self.stop))

    async def close(self) -> None:
        self.stop.set()
        if self.task is not None:
            await self.task


@contextlib.asynccontextmanager
async def _cluster(signer):
    """Two instances on the harness's queues, the harness's own (unnamed) gate stopped."""
    signer.stop.set()
    await _until(lambda: _true(signer.gate.drained and not signer.gate.polling))
    signer.settings.cluster.enabled = True
    async with signer.sessions() as session:
        for name in ("node-a", "node-b"):
            session.add(Instance(instance_id=f"{name}:worker:1", role="worker", host=name,
                                 pid=1, version="1", state="running", instance_name=name))
        await session.commit()
    # One client each, as two processes have: a client serves one worker per task queue.
    shared = signer.client
    a, b = [_Instance(signer, name, await Client.connect(
        shared.service_client.config.target_host, namespace=shared.namespace,
        data_converter=shared.data_converter)) for name in ("node-a", "node-b")]
    try:
        yield a, b
    finally:
        if signer.executor.hold is not None:
            signer.executor.hold.set()
        await a.close()
        await b.close()


async def _true(value: bool) -> bool:
    return value


async def _stand(signer, name: str, stood_down: bool) -> None:
    instances = signer.face.instances
    await (instances.stand_down if stood_down else instances.resume)(name, actor="operator:test")


def _status_is(signer, job_id: str, status: JobStatus):
    async def check() -> bool:
        job = await signer.repository.get(job_id)
        return job is not None and job.status == status.value
    return check


async def test_a_stood_down_instance_finishes_what_it_holds_and_another_takes_new_jobs(signer):
    async with _cluster(signer) as (a, b):
        signer.executor.hold = threading.Event()
        a.start()
        held = (await signer.enqueue(signer.drop("held.pdf", make_pdf()))).job_id
        await _until(_status_is(signer, held, JobStatus.PROCESSING))
        await _stand(signer, "node-a", True)
        await _until(lambda: _true(a.gate.stood_down and not a.gate.polling))
        assert not a.gate.drained, "the held job is still running"
        b.start()
        fresh = (await signer.enqueue(signer.drop("fresh.pdf", make_pdf()))).job_id
        await _until(_status_is(signer, fresh, JobStatus.PROCESSING))
        signer.executor.hold.set()
        done = {job_id: await signer.wait_for(job_id) for job_id in (held, fresh)}
        assert done[held].status == done[fresh].status == JobStatus.COMPLETED.value
        assert (done[held].instance_id, done[fresh].instance_id) == (a.ident, b.ident)
        await _until(lambda: _true(a.gate.drained))
        # Resume node-a and stand node-b down: the next job is node-a's again.
        await _stand(signer, "node-a", False)
        await _stand(signer, "node-b", True)
        await _until(lambda: _true(a.gate.polling and not b.gate.polling and b.gate.drained))
        later = (await signer.enqueue(signer.drop("later.pdf", make_pdf()))).job_id
        job = await signer.wait_for(later)
        assert (job.status, job.instance_id) == (JobStatus.COMPLETED.value, a.ident)


async def test_a_task_an_open_poll_took_after_the_stand_down_is_handed_back(signer):
    async with _cluster(signer) as (a, b):
        async def lagging() -> bool:
            return False  # node-a's gate hasn't read the flag yet: its poll stays open

        a.gate._paused = lagging
        a.start()
        await _until(lambda: _true(a.gate.polling))
        await _stand(signer, "node-a", True)
        job_id = (await signer.enqueue(signer.drop("late.pdf", make_pdf()))).job_id
        handle = signer.client.get_workflow_handle(job_workflow_id(job_id))

        async def refused() -> bool:
            pending = (await handle.describe()).raw_description.pending_activities
            return any(p.last_failure.application_failure_info.type == STOOD_DOWN
                       for p in pending)

        await _until(refused)
        assert (await signer.repository.get(job_id)).status == JobStatus.QUEUED.value
        b.start()
        job = await signer.wait_for(job_id)
        assert (job.status, job.instance_id) == (JobStatus.COMPLETED.value, b.ident)


async def test_the_stand_down_survives_a_restart(signer):
    async with _cluster(signer):
        await _stand(signer, "node-a", True)
    # A new process: a new engine reads the stored flag on its gate's first round.
    engine = create_engine(signer.settings.sqlalchemy_url)
    try:
        gate = PauseGatedWorker(lambda: None, session_factory(engine), poll_seconds=0.05,
                                instance="node-a")
        stop = asyncio.Event()
        task = asyncio.create_task(gate.run(stop))
        await _until(lambda: _true(gate.rounds >= 1))
        assert gate.stood_down and not gate.polling
        stop.set()
        await task
    finally:
        await engine.dispose()
