"""The claim honours the pause row in the same statement: after the pause answer, no claim."""

from __future__ import annotations

import asyncio

from sqlalchemy import event
from sqlmodel import func, select

from activities.signer.contracts.jobs import JobStatus
from activities.signer.models.jobs import Job
from activities.signer.operator import SignerOperations
from activities.signer.repository import Claim, JobRepository, new_job_id
from services.bootstrap import bootstrap
from shared.db.engine import create_engine, session_factory
from shared.db.sqlite_writer import writer_for
from shared.temporal import TemporalHandle

JOBS = 300
CLAIMERS = 4
# The claims a test sees refused after the pause is answered.
AFTER_ANSWER = 20
# A worker signs between two claims. Claims back to back kept SQLite's write lock taken, and the
# pause's write, backing off in SQLite's busy handler, could come in only after the last one.
PACE_SECONDS = 0.002


async def _queued(repository: JobRepository, n: int) -> list[str]:
    jobs = [Job(id=new_job_id(), file_name=f"j{i}.pdf", original_path=f"/in/j{i}.pdf",
                source="watcher", profile_name="default", format="Pades",
                status=JobStatus.QUEUED.value) for i in range(n)]
    await repository.insert_all([(job, "Queued.") for job in jobs])
    return [job.id for job in jobs]


async def _no_temporal():
    raise AssertionError("pausing never talks to Temporal")


async def _processing(sessions) -> int:
    async with sessions() as session:
        return (await session.exec(select(func.count()).select_from(Job).where(
            Job.status == JobStatus.PROCESSING.value))).one()


async def test_no_claim_succeeds_after_the_pause_is_answered(settings):
    await bootstrap(settings)
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    try:
        repository = JobRepository(sessions)
        pipeline = SignerOperations(settings, sessions, TemporalHandle(_no_temporal)).pipeline
        pending = await _queued(repository, JOBS)
        outcomes: dict[str, Claim] = {}
        started_after: list[str] = []
        first_claims, answered = asyncio.Event(), asyncio.Event()

        async def claimer() -> None:
            while pending and len(started_after) < AFTER_ANSWER:
                job_id = pending.pop(0)
                if answered.is_set():
                    started_after.append(job_id)
                outcomes[job_id] = await repository.claim(job_id, "Worker started job (t).")
                if sum(o is Claim.CLAIMED for o in outcomes.values()) >= 5:
                    first_claims.set()
                await asyncio.sleep(PACE_SECONDS)

        claimers = [asyncio.create_task(claimer()) for _ in range(CLAIMERS)]
        await first_claims.wait()
        await pipeline.pause(actor="test")
        at_answer = await _processing(sessions)
        answered.set()
        await asyncio.gather(*claimers)
        assert len(started_after) >= AFTER_ANSWER, "the claims ran out before the pause's answer"
        assert await _processing(sessions) == at_answer, "nothing claimed after the answer"
        assert {outcomes[j] for j in started_after} == {Claim.PAUSED}
        assert sum(o is Claim.CLAIMED for o in outcomes.values()) == at_answer >= 5
        await pipeline.resume(actor="test")
        paused_ids = [j for j, o in outcomes.items() if o is Claim.PAUSED]
        assert await repository.claim(paused_ids[0], "Resumed.") is Claim.CLAIMED
        assert await repository.claim(paused_ids[0], "Again.") is Claim.NOT_QUEUED
    finally:
        await engine.dispose()


async def test_a_claim_is_its_update_and_its_history_row_nothing_more(settings):
    # The pause row is read inside the UPDATE (under FOR SHARE on PostgreSQL), not by a
    # separate round trip before it.
    await bootstrap(settings)
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    statements: list[str] = []

    def seen(conn, cursor, statement, *args) -> None:
        statements.append(statement.split()[0].upper())

    # On a SQLite file the job's writes go through its writer's own engine.
    writer = writer_for(engine)
    executes = writer.engine if writer is not None else engine.sync_engine
    try:
        repository = JobRepository(sessions)
        job_id = (await _queued(repository, 1))[0]
        event.listen(executes, "before_cursor_execute", seen)
        assert await repository.claim(job_id, "Worker started job (t).") is Claim.CLAIMED
        assert statements == ["UPDATE", "INSERT"]
    finally:
        event.remove(executes, "before_cursor_execute", seen)
        await engine.dispose()
