"""Pause against a poll that is already open: the claim itself refuses, the job waits."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

from activities.signer import pipeline
from activities.signer.contracts.jobs import JobResult, JobStatus, job_workflow_id
from activities.signer.crypto.samples import make_pdf


async def _paused_attempt(signer, job_id: str, timeout: float = 30.0) -> int:
    """Wait until the job left Queued (0) or its activity was refused by the pause (attempt)."""
    handle = signer.client.get_workflow_handle(job_workflow_id(job_id))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = await signer.repository.get(job_id)
        if job.status != JobStatus.QUEUED.value:
            return 0
        for pending in (await handle.describe()).raw_description.pending_activities:
            failure = pending.last_failure
            if failure.application_failure_info.type == "PipelinePaused":
                return pending.attempt
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} neither claimed nor refused in time")


async def test_a_poll_open_at_the_pause_answer_claims_nothing_until_resume(signer, monkeypatch):
    monkeypatch.setattr(pipeline, "PAUSED_RETRY_DELAY", timedelta(milliseconds=300))

    async def lagging() -> bool:
        return False  # the gate hasn't read the pause yet: its poll stays open

    monkeypatch.setattr(signer.gate, "_paused", lagging)
    signed = []
    signer.executor.before = lambda fn, request: signed.append(fn)
    await signer.face.pipeline.pause(actor="operator")  # answered
    job_id = (await signer.enqueue(signer.drop("after-pause.pdf", make_pdf()))).job_id
    assert await _paused_attempt(signer, job_id) >= 1, "the open poll took it and claimed it"
    # The refused task comes back after its delay and is refused again: never signed.
    handle = signer.client.get_workflow_handle(job_workflow_id(job_id),
                                                        result_type=JobResult)
    while (await _paused_attempt(signer, job_id)) < 3:
        await asyncio.sleep(0.05)
    assert (await signer.repository.get(job_id)).status == JobStatus.QUEUED.value
    assert signed == [], "nothing signed while paused"
    await signer.face.pipeline.resume(actor="operator")
    job = await signer.wait_for(job_id)
    assert job.status == JobStatus.COMPLETED.value
    history = [h.to_status for h in await signer.history(job_id) if h.to_status]
    assert history == ["Queued", "Processing", "Verifying", "Completed"]
    assert (await handle.result()).status == JobStatus.COMPLETED


async def test_a_paused_backlog_is_not_polled_once_the_gate_follows(signer):
    await signer.face.pipeline.pause(actor="operator")
    while signer.gate.polling or not signer.gate.drained:
        await asyncio.sleep(0.02)
    job_id = (await signer.enqueue(signer.drop("backlog.pdf", make_pdf()))).job_id
    handle = signer.client.get_workflow_handle(job_workflow_id(job_id))
    await asyncio.sleep(1.0)  # a window in which a hot retry loop would show attempts
    [pending] = (await handle.describe()).raw_description.pending_activities
    assert pending.attempt == 1 and not pending.HasField("last_failure")
    await signer.face.pipeline.resume(actor="operator")
    assert (await signer.wait_for(job_id)).status == JobStatus.COMPLETED.value
