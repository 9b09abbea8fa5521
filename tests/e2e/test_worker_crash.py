"""kill -9 of a real worker process mid-job: requeued before the signing call, failed after."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlmodel import select

from activities.signer.contracts.jobs import JobSource
from activities.signer.enqueue import Enqueuer
from activities.signer.models.jobs import Job, SigningProfile
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from services.bootstrap import bootstrap
from shared.db.engine import create_engine, session_factory
from shared.db.models import OperationalEvent
from shared.temporal import TemporalHandle

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]
HEARTBEAT_TIMEOUT = 3.0


@pytest.fixture
def backend() -> str:
    """The crash semantics don't depend on the store; one backend keeps this tier quick."""
    return "sqlite"


class Deployment:
    """A bootstrapped store plus worker subprocesses started and killed at will."""

    def __init__(self, settings, temporal_env) -> None:
        self.settings = settings
        self.temporal_env = temporal_env
        self.engine = create_engine(settings.sqlalchemy_url)
        self.repository = JobRepository(session_factory(self.engine))
        self.enqueuer = Enqueuer(self.repository, StorageTree(settings.storage_root),
                                 TemporalHandle.of(temporal_env.client),
                                 task_queue_suffix=settings.pipeline.task_queue_suffix,
                                 heartbeat_timeout_seconds=HEARTBEAT_TIMEOUT)
        self.workers: list[subprocess.Popen] = []

    def start_worker(self) -> subprocess.Popen:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("ESTEIRA_")},
               "PYTHONPATH": str(REPO), "ESTEIRA_DATA_DIR": str(self.settings.data_dir),
               "ESTEIRA_DATABASE_URL": self.settings.sqlalchemy_url,
               "ESTEIRA_PIPELINE__TASK_QUEUE_SUFFIX": self.settings.pipeline.task_queue_suffix,
               "ESTEIRA_PIPELINE__POLL_INTERVAL_SECONDS": "0.2",
               "ESTEIRA_LOGGING__TO_FILE": "false",
               "TEMPORAL_ADDRESS": self.temporal_env.client.service_client.config.target_host}
        worker = subprocess.Popen([sys.executable, "-m", "services.cli", "worker", "--domains",
                                   "signer"], env=env, cwd=REPO, start_new_session=True,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.workers.append(worker)
        return worker

    @staticmethod
    def kill(worker: subprocess.Popen) -> None:
        os.killpg(worker.pid, signal.SIGKILL)  # the worker and its signing processes
        worker.wait()

    async def enqueue_big(self, name: str, megabytes: int) -> tuple[str, Path]:
        path = self.settings.storage_root / "input" / "inbox" / name
        chunk = os.urandom(1024 * 1024)
        with path.open("wb") as handle:
            for _ in range(megabytes):
                handle.write(chunk)
        profile = await self.repository.profile("default")
        result = await self.enqueuer.enqueue(path, source=JobSource.WATCHER, profile=profile,
                                             folder="inbox")
        assert result.job_id is not None, result.message
        return result.job_id, path

    async def wait(self, job_id: str, predicate, timeout: float = 90) -> Job:
        for _ in range(int(timeout / 0.01)):
            job = await self.repository.get(job_id)
            if job is not None and predicate(job):
                return job
            await asyncio.sleep(0.01)
        raise AssertionError(f"job {job_id} never matched; last {job.status}")

    async def events(self, type: str) -> list[OperationalEvent]:
        async with self.repository.sessions() as session:
            return list((await session.exec(select(OperationalEvent).where(
                OperationalEvent.type == type))).all())

    async def close(self) -> None:
        for worker in self.workers:
            if worker.poll() is None:
                self.kill(worker)
        await self.engine.dispose()


@pytest.fixture
async def deployment(settings, temporal_env):
    settings.pipeline.task_queue_suffix = f"-crash-{uuid.uuid4().hex[:8]}"
    await bootstrap(settings)
    engine = create_engine(settings.sqlalchemy_url)
    async with session_factory(engine)() as session:
        assert await session.get(SigningProfile, "default")
    await engine.dispose()
    deployment = Deployment(settings, temporal_env)
    yield deployment
    await deployment.close()


async def test_kill_after_the_signing_call_fails_the_job_and_never_signs_twice(deployment):
    worker = deployment.start_worker()
    job_id, path = await deployment.enqueue_big("grande.bin", 300)
    at_kill = await deployment.wait(job_id, lambda j: j.signing_started_at is not None)
    deployment.kill(worker)
    assert at_kill.status in ("Processing", "Verifying"), "killed before the job could finish"
    deployment.start_worker()
    job = await deployment.wait(job_id, lambda j: j.status in ("Completed", "Failed"))
    assert (job.status, job.error_code) == ("Failed", "job.interrupted")
    storage = deployment.settings.storage_root
    assert (storage / "error" / job_id / "grande.bin").exists(), "staged copy kept for forensics"
    assert not (storage / "processing" / job_id).exists()
    assert not (storage / "output" / "grande.bin.p7m").exists()
    assert path.exists(), "the input stays where it was"
    [event] = await deployment.events("JobTakenOver")
    assert event.properties["signingStarted"] is True


async def test_kill_before_the_signing_call_requeues_and_the_job_completes(deployment):
    worker = deployment.start_worker()
    job_id, path = await deployment.enqueue_big("staging.bin", 300)
    await deployment.wait(job_id, lambda j: j.status == "Processing")
    deployment.kill(worker)
    at_kill = await deployment.repository.get(job_id)
    if at_kill.signing_started_at is not None:
        pytest.skip("the worker reached the signing call before the kill landed")
    deployment.start_worker()
    job = await deployment.wait(job_id, lambda j: j.status in ("Completed", "Failed"))
    assert job.status == "Completed", job.error_message
    assert not path.exists()
    [event] = await deployment.events("JobTakenOver")
    assert event.properties["signingStarted"] is False
