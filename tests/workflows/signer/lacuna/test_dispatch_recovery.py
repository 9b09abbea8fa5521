"""A worker lost mid-dispatch (LacunaSigner) resumes by asking the Signer: one document, ever."""

from __future__ import annotations

import pytest

from activities.signer.contracts.jobs import JobStatus
from activities.signer.crypto.samples import make_pdf
from activities.signer.lacuna.dispatches import DispatchLog
from activities.signer.lacuna.methods import RemoteMethods
from activities.signer.models.jobs import Job

AWAITING = {JobStatus.AWAITING_SIGNER.value}


class WorkerLost(Exception):
    """What the activity sees instead of its next step: the worker died right here."""


def crash_once_after(owner: object, name: str, monkeypatch, *, when=lambda kw: True) -> list:
    """Let `owner.name` do its work, then lose the worker (once); returns the crash log."""
    real = getattr(owner, name)
    crashed: list[str] = []

    async def then_crash(*args, **kwargs):
        result = await real(*args, **kwargs)
        if not crashed and when(kwargs):
            crashed.append(name)
            raise WorkerLost(f"worker lost after {name}")
        return result

    monkeypatch.setattr(owner, name, then_crash)
    return crashed


async def _documents(remote) -> list[dict]:
    return (await remote.sim.http.get("/api/documents")).raise_for_status().json()["items"]


async def _sign_and_finish(remote, job: Job) -> Job:
    document = await remote.sim.document(job.remote_document_id)
    await remote.sim.act(document["id"], document["flowActions"][0]["id"], "sign")
    return await remote.signer.wait_for(job.id)


@pytest.mark.parametrize("point", ["upload", "create", "persist"])
async def test_a_worker_lost_mid_dispatch_resumes_with_exactly_one_document(remote, point,
                                                                           monkeypatch):
    client = remote.signer.activities.remote.client
    if point == "upload":
        crashed = crash_once_after(client, "upload", monkeypatch)
    elif point == "create":  # created on the Signer, the id never reached the checkpoint
        crashed = crash_once_after(client, "create_document", monkeypatch)
        # ...and the Signer is unreachable for a while: the job waits, it never fails.
        await remote.sim.fault(method="GET", path="/api/documents", status=503, count=1)
    else:
        crashed = crash_once_after(DispatchLog, "record", monkeypatch,
                                   when=lambda kw: "document_id" in kw)
    signer = remote.signer
    async with remote.worker():
        path = signer.drop("contrato.pdf", make_pdf(20_000))
        job_id = (await signer.enqueue(path, profile="remote")).job_id
        job = await signer.wait_for(job_id, AWAITING)
        [document] = await _documents(remote)
        assert crashed, "the worker was lost during the dispatch"
        assert job.remote_document_id == document["id"]
        assert job_id in document["name"]
        done = await _sign_and_finish(remote, job)
    assert done.status == JobStatus.COMPLETED, done.error_message
    assert len(await _documents(remote)) == 1
    steps = [h.to_status for h in await signer.history(job_id) if h.to_status]
    assert steps == ["Queued", "Processing", "AwaitingSigner", "Verifying", "Completed"]
    # One takeover per retry (each 503 is one more); every one resumed, none failed the job.
    assert {e.properties["jobId"] for e in await signer.events("JobTakenOver")} == {job_id}
    assert await DispatchLog(signer.sessions).get(job_id) is None


@pytest.mark.parametrize("id_was_persisted", [True, False])
async def test_retrying_a_failed_job_adopts_its_live_document_instead_of_a_second(
        remote, id_was_persisted):
    signer = remote.signer
    async with remote.worker():
        remote.awaiting.settings.max_wait_seconds = 0.5
        path = signer.drop("contrato.pdf", make_pdf(20_000))
        failed = await signer.wait_for((await signer.enqueue(path, profile="remote")).job_id)
        assert (failed.status, failed.error_code) == (JobStatus.FAILED, "signer.timeout")
        [document] = await _documents(remote)
        assert document["status"] == "Pending", "the participant can still sign it"
        if not id_was_persisted:
            # The state the old "lost right after the create call" failure left behind.
            async with signer.sessions() as session:
                row = await session.get(Job, failed.id)
                row.remote_document_id = None
                session.add(row)
                await session.commit()
        remote.awaiting.settings.max_wait_seconds = 3600
        retry_id = (await signer.face.jobs.retry(failed.id)).id
        retried = await signer.wait_for(retry_id, AWAITING)
        assert retried.remote_document_id == document["id"]
        assert len(await _documents(remote)) == 1, "no second signature flow"
        done = await _sign_and_finish(remote, retried)
    assert done.status == JobStatus.COMPLETED, done.error_message
    assert len(await _documents(remote)) == 1
    notes = [h.message for h in await signer.history(retry_id)]
    assert any(f"of job {failed.id}" in m for m in notes)


async def test_a_slow_worker_finishing_the_dispatch_first_is_not_failed_by_the_retry(
        remote, monkeypatch):
    """The "lost" worker was only slow: it moves the job on while the retry resumes."""
    signer = remote.signer
    crash_once_after(remote.signer.activities.remote.client, "create_document", monkeypatch)
    real_existing = RemoteMethods._existing

    async def slow_worker_wins(self, pipeline, job, checkpoint, *, fresh):
        found = await real_existing(self, pipeline, job, checkpoint, fresh=fresh)
        if found[0] is not None:
            assert await signer.repository.transition(
                job.id, [JobStatus.PROCESSING], JobStatus.AWAITING_SIGNER, "Slow worker.",
                remote_document_id=found[0])
        return found

    monkeypatch.setattr(RemoteMethods, "_existing", slow_worker_wins)
    async with remote.worker():
        path = signer.drop("contrato.pdf", make_pdf(20_000))
        job = await signer.wait_for((await signer.enqueue(path, profile="remote")).job_id,
                                    AWAITING)
        done = await _sign_and_finish(remote, job)
    assert done.status == JobStatus.COMPLETED, done.error_message
    assert len(await _documents(remote)) == 1
