"""A Canceled Signer-folder job shows Retry on its page, and the button queues the retry."""

from __future__ import annotations

import uuid

from activities.signer.contracts.jobs import JobSource, JobStatus
from activities.signer.contracts.lacuna import signer_folder_path
from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository
from tests.dashboard.conftest import csrf_of

RETRY_FORM = 'action="/jobs/{}/retry"'


async def _job(client, status: str, **fields) -> Job:
    job = Job(id=str(uuid.uuid4()), status=status, profile_name="default", format="Pades",
              **fields)
    return await JobRepository(client.context.sessions).insert(job, "test row")


async def _signer_folder_job(client, status: str) -> Job:
    return await _job(client, status, file_name="contrato.pdf",
                      original_path=signer_folder_path("pasta", f"doc-{uuid.uuid4().hex[:6]}",
                                                       "acao-1"),
                      source=JobSource.SIGNER_FOLDER.value, remote_document_id="doc",
                      remote_flow_action_id="acao-1")


async def test_a_canceled_signer_folder_job_is_retried_from_its_page(operator):
    canceled = await _signer_folder_job(operator, JobStatus.CANCELED.value)
    page = await operator.get(f"/jobs/{canceled.id}")
    assert RETRY_FORM.format(canceled.id) in page.text
    answer = await operator.post(f"/jobs/{canceled.id}/retry",
                                 data={"csrf_token": csrf_of(page.text)})
    assert answer.status_code == 303
    retry_id = answer.headers["location"].split("?")[0].rsplit("/", 1)[1]
    retry = await JobRepository(operator.context.sessions).get(retry_id)
    assert retry is not None and retry.id != canceled.id
    assert (retry.status, retry.parent_job_id, retry.remote_flow_action_id) == (
        JobStatus.QUEUED.value, canceled.id, "acao-1")


async def test_a_canceled_file_job_still_has_no_retry(operator):
    canceled = await _job(operator, JobStatus.CANCELED.value, file_name="folha.pdf",
                          original_path="/tmp/inbox/folha.pdf", source="watcher")
    page = await operator.get(f"/jobs/{canceled.id}")
    assert RETRY_FORM.format(canceled.id) not in page.text


async def test_the_cancel_dialog_of_a_signer_folder_job_says_it_can_be_retried(operator):
    queued = await _signer_folder_job(operator, JobStatus.QUEUED.value)
    page = (await operator.get(f"/jobs/{queued.id}")).text
    assert "A canceled Signer-folder job can be retried from this page" in page
    assert "A canceled job has no Retry" not in page
