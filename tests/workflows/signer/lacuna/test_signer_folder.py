"""Method = SignerFolder: discovery, the registry, moved-on documents, retry, delete, takeover."""

from __future__ import annotations

import asyncio

from cryptography import x509

from activities.signer.contracts.jobs import JobStatus
from activities.signer.crypto.samples import make_pdf
from activities.signer.crypto.verify import verify_pades
from shared.db.models import utcnow
from tests.workflows.signer.lacuna.conftest import FOLDER, holder_flow

QUEUED = {JobStatus.QUEUED.value}


async def _seed(remote, name: str = "termo.pdf") -> dict:
    return await remote.sim.seed(FOLDER, name, make_pdf(20_000, pages=2), holder_flow())


async def _queued_while_paused(remote) -> tuple[dict, str]:
    """A discovered document whose job waits Queued behind a paused pipeline."""
    await remote.signer.set_paused(True)
    document = await _seed(remote)
    report = await remote.scanner.scan()
    assert len(report.created) == 1
    await remote.signer.wait_for(report.created[0], QUEUED)
    return document, report.created[0]


async def test_discovered_document_is_signed_and_handed_back(remote, holder_pki):
    document = await _seed(remote)
    other = await remote.sim.seed(FOLDER, "alheio.pdf", make_pdf(5_000, pages=1), [
        {"type": "Signer", "step": 1, "user": {"identifier": "11122233344"}}])
    report = await remote.scanner.scan()
    assert len(report.created) == 1  # only the document whose current action is the holder's
    done = await remote.signer.wait_for(report.created[0])
    assert done.status == JobStatus.COMPLETED, done.error_message
    assert done.remote_document_id == document["id"]
    after = await remote.sim.document(document["id"])
    assert after["status"] == "Concluded"
    signed = (await remote.sim.http.get(f"/api/documents/{document['id']}/content",
                                        params={"type": "Signatures"})).content
    root = x509.load_pem_x509_certificate(holder_pki.ca_pem.read_bytes())
    assert (await asyncio.to_thread(verify_pades, signed, trust_roots=[root])).ok
    assert (await remote.sim.document(other["id"]))["status"] == "Pending"
    again = await remote.scanner.scan()
    assert again.created == []
    # A file routed to a SignerFolder profile is refused, not signed as if it were a document.
    result = await remote.signer.enqueue(remote.signer.drop("solto.pdf", make_pdf(5_000)),
                                         profile="holder")
    stray = await remote.signer.wait_for(result.job_id)
    assert (stray.status, stray.error_code) == (JobStatus.FAILED, "profile.invalid")


async def test_document_moved_on_before_signing_cancels_the_job(remote):
    document, job_id = await _queued_while_paused(remote)
    # The holder signs it in the Signer's own web page while our job waits.
    await remote.sim.act(document["id"], document["flowActions"][0]["id"], "sign")
    await remote.signer.set_paused(False)
    done = await remote.signer.wait_for(job_id)
    assert done.status == JobStatus.CANCELED
    history = await remote.signer.history(job_id)
    assert history[-1].code == "signer-folder.moved-on"
    assert history[-1].from_status == JobStatus.PROCESSING


async def test_retry_from_canceled_signs_the_same_document(remote):
    signer = remote.signer
    document, job_id = await _queued_while_paused(remote)
    await signer.face.jobs.cancel(job_id, reason=None, actor="test")
    retry_id = (await signer.face.jobs.retry(job_id)).id
    await signer.set_paused(False)
    done = await signer.wait_for(retry_id)
    assert done.status == JobStatus.COMPLETED and done.parent_job_id == job_id
    assert (await remote.sim.document(document["id"]))["status"] == "Concluded"


async def test_delete_or_clear_then_rescan_does_not_sign_again(remote):
    signer = remote.signer
    document, job_id = await _queued_while_paused(remote)
    await signer.face.jobs.delete(job_id, actor="test")
    assert await signer.repository.get(job_id) is None
    report = await remote.scanner.scan()
    assert report.created == [] and report.known == 1
    await signer.face.jobs.clear(actor="test")
    assert (await remote.scanner.scan()).created == []
    assert (await remote.sim.document(document["id"]))["status"] == "Pending"


async def test_lost_worker_past_the_signing_call_asks_the_signer(remote):
    signer = remote.signer
    document, job_id = await _queued_while_paused(remote)
    # As a dead worker leaves it: claimed and past the signing call.
    await signer.repository.transition(job_id, [JobStatus.QUEUED], JobStatus.PROCESSING,
                                       "claimed", signing_started_at=utcnow())
    job = await signer.repository.get(job_id)
    result = await signer.activities._take_over(job)
    assert result.status == JobStatus.FAILED
    assert result.error_code == "signer-folder.interrupted"
    # The Signer shows the action done: a second such job is completed, not failed.
    retry_id = (await signer.face.jobs.retry(job_id)).id
    await signer.repository.transition(retry_id, [JobStatus.QUEUED], JobStatus.PROCESSING,
                                       "claimed", signing_started_at=utcnow())
    await remote.sim.act(document["id"], document["flowActions"][0]["id"], "sign")
    result = await signer.activities._take_over(await signer.repository.get(retry_id))
    assert result.status == JobStatus.COMPLETED
    await signer.set_paused(False)

