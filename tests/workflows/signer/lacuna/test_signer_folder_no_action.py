"""A Signer document with no action for the holder: Failed once, registered again once."""

from __future__ import annotations

import pytest

from activities.signer.contracts.jobs import JobStatus
from activities.signer.crypto.samples import make_pdf
from shared.errors import EsteiraError
from tests.support.lacuna import HOLDER_CPF
from tests.workflows.signer.lacuna.conftest import FOLDER

OTHER_CPF = "11122233344"


async def test_a_document_without_the_holders_action_fails_then_is_registered_again_once(
        remote):
    document = await remote.sim.seed(FOLDER, "alheio.pdf", make_pdf(5_000, pages=1), [
        {"type": "Signer", "step": 1, "user": {"identifier": OTHER_CPF}}])
    first = await remote.scanner.scan()
    assert first.created == [] and len(first.no_action) == 1
    job = await remote.signer.repository.get(first.no_action[0])
    assert job is not None
    assert (job.status, job.error_code, job.remote_document_id) == (
        JobStatus.FAILED.value, "signer-folder.no-action", document["id"])
    assert "has no action for the holder" in (job.error_message or "")
    history = await remote.signer.history(job.id)
    assert [(h.to_status, h.code) for h in history] == [
        (JobStatus.FAILED.value, "signer-folder.no-action")]
    # The next scan that still finds it registers it again, once; then never again.
    second = await remote.scanner.scan()
    assert len(second.no_action) == 1 and second.no_action != first.no_action
    assert (await remote.scanner.scan()).no_action == []
    # Nothing to sign: a retry is refused and says why.
    with pytest.raises(EsteiraError) as refused:
        await remote.signer.face.jobs.retry(job.id)
    assert refused.value.code == "job.input-missing"
    assert (await remote.signer.face.jobs.detail(job.id)).retriable is False
    assert (await remote.sim.document(document["id"]))["status"] == "Pending"


async def test_a_holder_action_on_a_later_step_is_waited_for_not_failed(remote):
    await remote.sim.seed(FOLDER, "depois.pdf", make_pdf(5_000, pages=1), [
        {"type": "Signer", "step": 1, "user": {"identifier": OTHER_CPF}},
        {"type": "Signer", "step": 2, "user": {"identifier": HOLDER_CPF}}])
    report = await remote.scanner.scan()
    assert report.created == [] and report.no_action == []
