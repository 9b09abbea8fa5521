"""A Queued row whose workflow start was lost (Temporal down then) is started again by the
watcher's call into the face, once, and the job runs to the end."""

from __future__ import annotations

from datetime import timedelta

from activities.signer.contracts.jobs import JobStatus
from activities.signer.crypto.samples import make_pdf
from activities.signer.models.jobs import Job
from activities.signer.repository import new_job_id
from shared.db.models import utcnow


async def test_a_queued_job_without_its_workflow_is_started_and_signed(signer):
    path = signer.drop("perdido.pdf", make_pdf())
    job = Job(id=new_job_id(), file_name=path.name, original_path=str(path), folder="inbox",
              source="watcher", profile_name="default", format="Pades",
              status=JobStatus.QUEUED.value)
    await signer.repository.insert(job, "Queued from watcher (inbox).")  # no workflow yet
    watching = signer.face.watching
    assert await watching.start_lost_workflows(utcnow() - timedelta(minutes=1)) == 0, \
        "a row newer than the cut-off may still be starting"
    assert await watching.start_lost_workflows(utcnow() + timedelta(seconds=1)) == 1
    done = await signer.wait_for(job.id)
    assert done.status == JobStatus.COMPLETED
    assert await watching.start_lost_workflows(utcnow() + timedelta(seconds=1)) == 0, \
        "its start is recorded: it is not started again"
