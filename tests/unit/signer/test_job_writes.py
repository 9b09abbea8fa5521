"""A job's hot writes: Core statements built once, no ORM unit of work, history intact."""

from __future__ import annotations

import pytest
from sqlalchemy import event
from sqlalchemy.orm import Session
from sqlmodel import select

from activities.signer.contracts.jobs import JobStatus
from activities.signer.models.jobs import Job, JobHistory
from activities.signer.repository import AlreadyActiveError, Claim, JobRepository, new_job_id
from shared.db.models import OperationalEvent


@pytest.fixture
def orm_statements():
    """Every statement an ORM session runs or flushes while the test runs."""
    seen: list[str] = []

    def executed(state):
        seen.append(str(state.statement))

    def flushed(session, _context, _instances):
        seen.append(f"flush of {len(session.new) + len(session.dirty)} objects")

    event.listen(Session, "do_orm_execute", executed)
    event.listen(Session, "before_flush", flushed)
    try:
        yield seen
    finally:
        event.remove(Session, "do_orm_execute", executed)
        event.remove(Session, "before_flush", flushed)


async def _history(repository: JobRepository, job_id: str) -> list[tuple]:
    async with repository.sessions() as session:
        rows = (await session.exec(select(JobHistory).where(JobHistory.job_id == job_id)
                                   .order_by(JobHistory.id))).all()
    return [(r.from_status, r.to_status, r.code, r.message) for r in rows]


async def test_a_job_from_drop_to_completed_writes_no_orm_statement(repository, orm_statements):
    job = Job(id=new_job_id(), file_name="a.pdf", original_path="/in/a.pdf", source="watcher",
              profile_name="default", format="Pades", status=JobStatus.QUEUED.value)
    await repository.insert(job, "Queued from watcher.")
    await repository.mark_workflow_started(job.id)
    assert await repository.claim(job.id, "Worker started job (w1).",
                                  instance_id="w1") is Claim.CLAIMED
    await repository.note(job.id, "Signing (Pades).", preceded_by="Staged 10 bytes.",
                          input_size=10)
    assert await repository.transition(job.id, [JobStatus.PROCESSING], JobStatus.VERIFYING,
                                       "Signed; verifying.")
    done = OperationalEvent(domain="signer", type="InputDiverged", message="diverged",
                            properties={"jobId": job.id})
    assert await repository.transition(job.id, [JobStatus.VERIFYING], JobStatus.COMPLETED,
                                       "Completed.", event=done, output_path="/out/a.pdf")

    assert orm_statements == []
    assert await _history(repository, job.id) == [
        (None, "Queued", None, "Queued from watcher."),
        ("Queued", "Processing", None, "Worker started job (w1)."),
        (None, None, None, "Staged 10 bytes."),
        (None, None, None, "Signing (Pades)."),
        ("Processing", "Verifying", None, "Signed; verifying."),
        ("Verifying", "Completed", None, "Completed."),
    ]
    stored = await repository.get(job.id)
    assert (stored.status, stored.instance_id, stored.input_size, stored.output_path,
            stored.version) == ("Completed", "w1", 10, "/out/a.pdf", 3)
    assert stored.workflow_started_at is not None
    async with repository.sessions() as session:
        events = (await session.exec(select(OperationalEvent).where(
            OperationalEvent.type == "InputDiverged"))).all()
    assert [e.properties for e in events] == [{"jobId": job.id}]


async def test_a_refused_transition_writes_nothing(repository):
    job = Job(id=new_job_id(), file_name="b.pdf", original_path="/in/b.pdf", source="watcher",
              profile_name="default", format="Pades", status=JobStatus.QUEUED.value)
    await repository.insert(job, "Queued.")

    assert not await repository.transition(job.id, [JobStatus.VERIFYING], JobStatus.COMPLETED,
                                           "Completed.")
    # From several states, the history says which one it left.
    assert await repository.transition(job.id, [JobStatus.PROCESSING, JobStatus.QUEUED],
                                       JobStatus.FAILED, "Gone.", code="x.y")

    assert await _history(repository, job.id) == [
        (None, "Queued", None, "Queued."), ("Queued", "Failed", "x.y", "Gone.")]
    assert (await repository.get(job.id)).version == 1


def test_each_statement_is_built_once(repository):
    writes = repository.writes
    first = writes.update_job(["output_path"], expected=["Verifying"], to="Completed")
    assert writes.update_job(["output_path"], expected=["Verifying"], to="Completed") is first
    assert writes.update_job(["input_size"], expected=["Verifying"], to="Completed") is not first


def _queued(path: str) -> Job:
    return Job(id=new_job_id(), file_name=path.rsplit("/", 1)[1], original_path=path,
               source="watcher", profile_name="default", format="Pades",
               status=JobStatus.QUEUED.value)


async def test_new_jobs_inserted_together_share_one_commit(repository):
    commits = []
    run = repository.writes.run

    async def counted(write):
        commits.append(write)
        return await run(write)

    repository.writes.run = counted
    jobs = [_queued(f"/in/inbox/{n}.pdf") for n in range(3)]
    assert await repository.insert_all([(job, "Queued from watcher (inbox).") for job in jobs]) \
        == jobs
    assert len(commits) == 1
    for job in jobs:
        assert await _history(repository, job.id) == [
            (None, "Queued", None, "Queued from watcher (inbox).")]


async def test_a_path_already_active_fails_only_its_own_insert(repository):
    await repository.insert(_queued("/in/inbox/busy.pdf"), "Queued.")
    jobs = [_queued(path) for path in ("/in/inbox/a.pdf", "/in/INBOX/busy.pdf", "/in/inbox/b.pdf")]
    outcomes = await repository.insert_all([(job, "Queued.") for job in jobs])
    assert outcomes[0] is jobs[0] and outcomes[2] is jobs[2]
    assert isinstance(outcomes[1], AlreadyActiveError)
    async with repository.sessions() as session:
        stored = {j.id for j in (await session.exec(select(Job))).all()}
    assert {jobs[0].id, jobs[2].id} <= stored and jobs[1].id not in stored
