"""`Pipeline:MaxConcurrency` 4 (our default, the seed's is 1): four signings at once, each once."""

from __future__ import annotations

import asyncio
import threading
import time

from activities.signer import engine
from activities.signer.contracts.jobs import JobStatus
from activities.signer.crypto.samples import make_pdf
from activities.signer.settings import PipelineSettings


async def _signing(signer, job_ids: list[str], n: int, timeout: float = 60) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        jobs = [await signer.repository.get(j) for j in job_ids]
        started = [j.id for j in jobs if j.signing_started_at is not None]
        if len(started) >= n:
            return started
        await asyncio.sleep(0.05)
    raise AssertionError(f"fewer than {n} jobs reached the signing call")


async def test_four_jobs_sign_at_once_on_one_worker_each_claimed_and_signed_once(signer):
    # The harness's signing worker has 4 slots, the default this project ships.
    assert PipelineSettings().max_concurrency == 4
    calls = []
    signer.executor.before = lambda fn, request: calls.append(fn) if fn is engine.sign else None
    signer.executor.hold = release = threading.Event()
    ids = [(await signer.enqueue(signer.drop(f"lote{n}.pdf", make_pdf()))).job_id
           for n in range(5)]
    started = await _signing(signer, ids, 4)
    # Each of the four holds its slot through the signing call: the fifth can't be claimed.
    [waiting] = [j for j in ids if j not in started]
    assert len(started) == 4
    assert (await signer.repository.get(waiting)).status == JobStatus.QUEUED.value
    release.set()
    jobs = [await signer.wait_for(j) for j in ids]
    assert {j.status for j in jobs} == {JobStatus.COMPLETED.value}
    assert len(calls) == 5, "one signing call per job, none repeated"
    for job in jobs:
        claims = [h for h in await signer.history(job.id) if h.to_status == "Processing"]
        assert len(claims) == 1, "one claim per job"
    assert len({j.output_path for j in jobs}) == 5
