"""The claim's one read (job, approval, profile) and the watcher's one lookup per file."""

from __future__ import annotations

from datetime import timedelta

from activities.signer.contracts.approvals import ApprovalState
from activities.signer.contracts.jobs import JobStatus
from activities.signer.models.approvals import JobApproval
from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository, new_job_id
from shared.db.models import utcnow


async def _job(repository: JobRepository, path: str, status: JobStatus, age: int,
               profile: str = "default") -> Job:
    job = Job(id=new_job_id(), file_name=path.rsplit("/", 1)[1], original_path=path,
              source="watcher", profile_name=profile, format="Pades", status=status.value,
              created_at=utcnow() - timedelta(minutes=age))
    return await repository.insert(job, "Queued.")


async def test_load_reads_the_job_with_its_approval_and_profile(repository):
    plain = await _job(repository, "/in/a.pdf", JobStatus.QUEUED, 1)
    held = await _job(repository, "/in/b.pdf", JobStatus.QUEUED, 1)
    orphan = await _job(repository, "/in/c.pdf", JobStatus.QUEUED, 1, profile="gone")
    async with repository.sessions() as session:
        session.add(JobApproval(job_id=held.id, profile_name="default", rule={}, quorum=1,
                                staged_path="/staging/b.pdf", staged_size=1,
                                staged_sha256="0" * 64, state=ApprovalState.RELEASED.value,
                                requested_at=utcnow()))
        await session.commit()

    loaded = await repository.load(plain.id)
    assert (loaded.job.id, loaded.approval, loaded.profile.name) == (plain.id, None, "default")
    loaded = await repository.load(held.id)
    assert (loaded.approval.state, loaded.profile.name) == ("Released", "default")
    loaded = await repository.load(orphan.id)
    assert (loaded.job.id, loaded.profile) == (orphan.id, None)
    assert await repository.load(new_job_id()) is None


async def test_one_lookup_answers_what_the_two_did(repository):
    # The path's latest job is a newer Failed one; the name's holder is the oldest Completed.
    await _job(repository, "/in/Other/Folha.pdf", JobStatus.COMPLETED, 30)
    await _job(repository, "/in/inbox/folha.pdf", JobStatus.COMPLETED, 20)
    await _job(repository, "/in/inbox/folha.pdf", JobStatus.FAILED, 10)
    await _job(repository, "/in/inbox/other.pdf", JobStatus.QUEUED, 5)
    for path, name in [("/in/INBOX/folha.pdf", "FOLHA.pdf"), ("/in/inbox/other.pdf", "other.pdf"),
                       ("/in/inbox/new.pdf", "new.pdf"), ("/in/inbox/folha.pdf", "other.pdf")]:
        latest, owner = await repository.path_and_name(path, name)
        expected = (await repository.latest_for_path(path), await repository.name_owner(name))
        assert (_id(latest), _id(owner)) == tuple(_id(j) for j in expected), (path, name)
    latest, owner = await repository.path_and_name("/in/inbox/folha.pdf", None)
    assert (latest.status, owner) == ("Failed", None)
    latest, owner = await repository.path_and_name(None, "folha.pdf")
    assert (latest, owner.original_path) == (None, "/in/Other/Folha.pdf")
    assert await repository.path_and_name(None, None) == (None, None)


def _id(job: Job | None) -> str | None:
    return None if job is None else job.id


async def test_one_statement_answers_each_file_of_a_burst_as_its_own_lookup(repository):
    await _job(repository, "/in/Other/Folha.pdf", JobStatus.COMPLETED, 30)
    await _job(repository, "/in/inbox/folha.pdf", JobStatus.COMPLETED, 20)
    await _job(repository, "/in/inbox/folha.pdf", JobStatus.FAILED, 10)
    await _job(repository, "/in/inbox/other.pdf", JobStatus.QUEUED, 5)
    # Each answer of one file is also a row the statement brings for the others.
    questions = [("/in/INBOX/folha.pdf", "FOLHA.pdf"), ("/in/inbox/other.pdf", "other.pdf"),
                 ("/in/inbox/new.pdf", "new.pdf"), ("/in/inbox/folha.pdf", "other.pdf"),
                 ("/in/inbox/folha.pdf", None), (None, "folha.pdf"), (None, None)]
    together = await repository.paths_and_names(questions)
    alone = [await repository.path_and_name(*question) for question in questions]
    assert [(_id(a), _id(b)) for a, b in together] == [(_id(a), _id(b)) for a, b in alone]
    assert await repository.paths_and_names([]) == []
