"""Two workers and two APIs on one Temporal and one PostgreSQL; a worker killed mid-run."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections import Counter

import httpx
import pytest
from sqlmodel import select

from activities.signer.models.jobs import Job, JobHistory
from services.bootstrap import bootstrap
from tests.e2e.test_worker_crash import REPO, Deployment
from tests.support.ports import free_ports

pytestmark = pytest.mark.e2e
HEARTBEAT_TIMEOUT = 3
JOBS = 8
FILE_BYTES = 24 * 1024 * 1024


@pytest.fixture
def backend() -> str:
    """Replicas share one store, which in a cluster is PostgreSQL."""
    return "postgres"


class Cluster(Deployment):
    """Worker and API replicas as separate processes over one data directory (the RWX volume)."""

    def __init__(self, settings, temporal_env) -> None:
        super().__init__(settings, temporal_env)
        self.apis: list[tuple[subprocess.Popen, str]] = []

    def start_api(self, port: int) -> str:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("ESTEIRA_")},
               "PYTHONPATH": str(REPO), "ESTEIRA_DATA_DIR": str(self.settings.data_dir),
               "ESTEIRA_DATABASE_URL": self.settings.sqlalchemy_url,
               "ESTEIRA_API_KEY": self.settings.api_key.get_secret_value(),
               "ESTEIRA_PORTS__API": str(port),
               "ESTEIRA_PIPELINE__TASK_QUEUE_SUFFIX": self.settings.pipeline.task_queue_suffix,
               "ESTEIRA_PIPELINE__HEARTBEAT_TIMEOUT_SECONDS": str(HEARTBEAT_TIMEOUT),
               # Only signer workers run here: readiness requires no other domain's.
               "ESTEIRA_READINESS__WORKER_DOMAINS": '["signer"]',
               # No watcher, gRPC or gateway in this test: the APIs shouldn't wait for them.
               "ESTEIRA_READINESS__PROCESSES": "[]",
               "ESTEIRA_LOGGING__TO_FILE": "false",
               "TEMPORAL_ADDRESS": self.temporal_env.client.service_client.config.target_host}
        api = subprocess.Popen([sys.executable, "-m", "services.cli", "api"], env=env, cwd=REPO,
                               start_new_session=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        self.workers.append(api)  # stopped with the workers on close
        url = f"http://127.0.0.1:{port}"
        self.apis.append((api, url))
        return url

    async def wait_ready(self, url: str, process: subprocess.Popen) -> None:
        async with httpx.AsyncClient(timeout=5) as http:
            for _ in range(600):
                assert process.poll() is None, f"{url} exited with {process.returncode}"
                try:
                    if (await http.get(f"{url}/api/ready")).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
        raise AssertionError(f"{url} never became ready")

    async def upload(self, url: str, name: str) -> str:
        async with httpx.AsyncClient(timeout=60) as http:
            response = await http.post(
                f"{url}/api/files", files={"file": (name, os.urandom(FILE_BYTES))},
                headers={"X-API-Key": self.settings.api_key.get_secret_value()})
        assert response.status_code == 201, response.text
        return response.json()["id"]

    async def jobs(self) -> list[Job]:
        async with self.repository.sessions() as session:
            return list((await session.exec(select(Job))).all())

    async def signing_calls(self) -> Counter[str]:
        async with self.repository.sessions() as session:
            rows = (await session.exec(select(JobHistory.job_id).where(
                JobHistory.message.startswith("Signing (")))).all()
        return Counter(rows)


@pytest.fixture
async def cluster(settings, temporal_env):
    settings.pipeline.task_queue_suffix = f"-replicas-{uuid.uuid4().hex[:8]}"
    await bootstrap(settings)
    cluster = Cluster(settings, temporal_env)
    yield cluster
    await cluster.close()


async def test_jobs_through_two_apis_survive_losing_one_of_two_workers(cluster):
    doomed, survivor = cluster.start_worker(), cluster.start_worker()
    urls = [cluster.start_api(port) for port in free_ports(2)]
    await asyncio.gather(*(cluster.wait_ready(url, api) for api, url in cluster.apis))

    job_ids = await asyncio.gather(*(cluster.upload(urls[i % 2], f"doc-{i}.bin")
                                     for i in range(JOBS)))
    assert len(set(job_ids)) == JOBS

    doomed_owner = f":worker:{doomed.pid}"
    for _ in range(6000):
        held = [j for j in await cluster.jobs()
                if j.status == "Processing" and (j.instance_id or "").endswith(doomed_owner)]
        if held:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the doomed worker never held a job")
    cluster.kill(doomed)
    at_kill = {j.id: j for j in await cluster.jobs()}
    interrupted = {j.id for j in at_kill.values()
                   if j.status in ("Processing", "Verifying") and j.signing_started_at
                   and j.instance_id.endswith(doomed_owner)}

    finished = {job_id: await cluster.wait(job_id, lambda j: j.status in (
        "Completed", "Failed", "Canceled")) for job_id in job_ids}
    assert survivor.poll() is None
    for job_id, job in finished.items():
        expected = ("Failed", "job.interrupted") if job_id in interrupted else ("Completed", None)
        assert (job.status, job.error_code) == expected, (job_id, job.error_message)
    assert max((await cluster.signing_calls()).values()) == 1, "a job was signed twice"
    outputs = list((cluster.settings.storage_root / "output").iterdir())
    assert len(outputs) == JOBS - len(interrupted)
    assert any(j.instance_id.endswith(f":worker:{survivor.pid}") for j in finished.values())
    takeovers = await cluster.events("JobTakenOver")
    assert any(e.properties["from"].endswith(doomed_owner) for e in takeovers)
