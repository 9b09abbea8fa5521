"""A retry keeps the failed job's Format, whatever the profile would choose today."""

from __future__ import annotations

import uuid

from activities.signer.contracts.jobs import JobSource, JobStatus
from activities.signer.crypto.samples import make_pdf
from activities.signer.models.jobs import Job


async def test_a_retry_signs_with_the_format_the_failed_job_recorded(signer):
    # The default profile signs a .pdf as PAdES ("auto"); this job recorded CAdES.
    path = signer.drop("contrato.pdf", make_pdf())
    failed = Job(id=str(uuid.uuid4()), file_name=path.name, original_path=str(path),
                 folder="inbox", source=JobSource.WATCHER.value, profile_name="default",
                 format="Cades", status=JobStatus.FAILED.value, error_code="signing.failed",
                 error_message="the first attempt failed")
    await signer.repository.insert(failed, "test row")
    retry = await signer.face.jobs.retry(failed.id)
    assert (retry.format, retry.parent_job_id) == ("Cades", failed.id)
    done = await signer.wait_for(retry.id)
    assert done.status == JobStatus.COMPLETED.value, done.error_message
    assert done.output_path is not None and done.output_path.endswith("contrato.pdf.p7m")
