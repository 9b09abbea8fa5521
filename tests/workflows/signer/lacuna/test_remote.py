"""Method = LacunaSigner: dispatch, AwaitingSigner, the poll/webhook wait, cancel, restarts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from cryptography import x509
from temporalio.client import WorkflowFailureError

from activities.signer.contracts.jobs import JobStatus, job_workflow_id
from activities.signer.crypto.samples import make_pdf
from activities.signer.crypto.verify import verify_pades
from services.app import create_app
from tests.api.conftest import make_context
from tests.support.pickup import serve
from tests.workflows.signer.lacuna.conftest import WEBHOOK_TOKEN
from workflows.signer.remote import CHECK_TIMEOUT

AWAITING = {JobStatus.AWAITING_SIGNER.value}


async def _dispatch(remote, name: str = "contrato.pdf"):
    signer = remote.signer
    path = signer.drop(name, make_pdf(20_000, pages=2))
    result = await signer.enqueue(path, profile="remote")
    job = await signer.wait_for(result.job_id, AWAITING)
    document = await remote.sim.document(job.remote_document_id)
    return path, job, document


async def test_dispatch_then_webhook_concluded_is_verified_and_promoted(remote, settings,
                                                                        temporal_env):
    # Polls are an hour apart: only the webhook, through our real HTTP route, can wake it.
    remote.awaiting.settings.poll_interval_seconds = 3600
    context = await make_context(settings, temporal_env)
    try:
        # In this loop: the app's pool holds connections this loop opened (the profile check).
        async with serve(create_app(context)) as api_url:
            remote.sim_settings.webhook_url = (f"{api_url}/api/signer/lacuna/webhook/"
                                               f"{WEBHOOK_TOKEN}")
            async with remote.worker():
                path, job, document = await _dispatch(remote)
                assert document["status"] == "Pending"
                assert document["flowActions"][0]["user"]["identifier"] == "98765432100"
                await remote.sim.act(document["id"], document["flowActions"][0]["id"], "sign")
                done = await remote.signer.wait_for(job.id, timeout=30)
    finally:
        await context.engine.dispose()
    assert done.status == JobStatus.COMPLETED, done.error_message
    output = Path(done.output_path)
    assert output.name == "contrato.signed.pdf"
    profile = await remote.signer.profile("remote")
    roots = [x509.load_pem_x509_certificate(Path(p).read_bytes()) for p in profile.trust_roots]
    verdict = await asyncio.to_thread(verify_pades, output.read_bytes(), trust_roots=roots)
    assert verdict.ok, verdict.reason
    assert not path.exists()  # the input is released only after verification
    steps = [h.to_status for h in await remote.signer.history(job.id) if h.to_status]
    assert steps == ["Queued", "Processing", "AwaitingSigner", "Verifying", "Completed"]


async def test_refused_and_expired_documents_fail_their_jobs(remote):
    async with remote.worker():
        _, refused, document = await _dispatch(remote, "recusado.pdf")
        await remote.sim.act(document["id"], document["flowActions"][0]["id"], "refuse")
        _, expired, document = await _dispatch(remote, "expirado.pdf")
        (await remote.sim.http.post(f"/_sim/documents/{document['id']}/expire")
         ).raise_for_status()
        refused = await remote.signer.wait_for(refused.id)
        expired = await remote.signer.wait_for(expired.id)
    assert (refused.status, refused.error_code) == (JobStatus.FAILED, "signer.refused")
    assert (expired.status, expired.error_code) == (JobStatus.FAILED, "signer.expired")
    # The staged copy kept while waiting is preserved for analysis.
    assert (remote.signer.storage.error / refused.id / "recusado.pdf").exists()


async def test_a_document_never_concluded_times_out(remote):
    remote.awaiting.settings.max_wait_seconds = 0.5
    async with remote.worker():
        _, job, _ = await _dispatch(remote)
        done = await remote.signer.wait_for(job.id)
    assert done.status == JobStatus.FAILED and done.error_code == "signer.timeout"


async def test_cancel_while_awaiting_cancels_remotely_and_stands_if_that_fails(remote):
    signer = remote.signer
    handles = []
    async with remote.worker():
        _, failing, failing_doc = await _dispatch(remote, "a.pdf")
        _, working, working_doc = await _dispatch(remote, "b.pdf")
        await remote.sim.fault(method="POST", path=f"/api/documents/{failing_doc['id']}/"
                               "cancellation", status=503, count=5)
        for job in (failing, working):
            canceled = await signer.face.jobs.cancel(job.id, reason="wrong file", actor="test")
            assert canceled.status == JobStatus.CANCELED
            handles.append(signer.client.get_workflow_handle(job_workflow_id(job.id)))
        for handle in handles:
            with pytest.raises(WorkflowFailureError):
                await handle.result()
    assert (await signer.repository.get(failing.id)).status == JobStatus.CANCELED
    assert (await remote.sim.document(failing_doc["id"]))["status"] == "Pending"
    assert (await remote.sim.document(working_doc["id"]))["status"] == "Canceled"


async def test_worker_stopped_while_awaiting_resumes_polling_without_failing(remote):
    async with remote.worker():
        _, job, document = await _dispatch(remote)
    # No worker polls now; the participant signs meanwhile.
    await remote.sim.act(document["id"], document["flowActions"][0]["id"], "sign")
    assert (await remote.signer.repository.get(job.id)).status == JobStatus.AWAITING_SIGNER
    async with remote.worker():
        # A status check the stopped worker took with it is retried once its start-to-close
        # timeout passes; polling then resumes.
        done = await remote.signer.wait_for(job.id, timeout=CHECK_TIMEOUT.total_seconds() + 60)
    assert done.status == JobStatus.COMPLETED
    assert not [h for h in await remote.signer.history(job.id) if h.to_status == "Failed"]
