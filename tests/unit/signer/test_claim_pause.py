"""The claim honours the pause row in the same statement: after the pause answer, no claim."""

from __future__ import annotations

import asyncio

from sqlalchemy import event
from sqlmodel import func, select

from activities.signer.operator.pipeline_control import set_paused
from activities.signer.repository import Claim, JobRepository, new_job_id
from services.bootstrap import bootstrap
from shared.contracts.signer import JobStatus
from shared.db.engine import create_engine, session_factory
from shared.db.signer_models import Job

JOBS = 100
CLAIMERS = 4


async def _queued(repository: JobRepository, n: int) -> list[str]:
    ids = []
    for i in range(n):
        job = Job(id=new_job_id(), file_name=f"j{i}.pdf", original_path=f"/in/j{i}.pdf",
                  source="watcher", profile_name="default", format="Pades",
                  status=JobStatus.QUEUED.value)
        await repository.insert(job, "Queued.")
        ids.append(job.id)
    return ids


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
        pending = await _queued(repository, JOBS)
        outcomes: dict[str, Claim] = {}
        first_claims = asyncio.Event()

        async def claimer() -> None:
            while pending:
                job_id = pending.pop(0)
                outcomes[job_id] = await repository.claim(job_id, "Worker started job (t).")
                if sum(o is Claim.CLAIMED for o in outcomes.values()) >= 5:
                    first_claims.set()

        claimers = [asyncio.create_task(claimer()) for _ in range(CLAIMERS)]
        await first_claims.wait()
        await set_paused(sessions, paused=True, actor="test")
        at_answer = await _processing(sessions)
        await asyncio.gather(*claimers)
        assert await _processing(sessions) == at_answer, "nothing claimed after the answer"
        assert sum(o is Claim.PAUSED for o in outcomes.values()) == JOBS - at_answer
        assert JOBS > at_answer >= 5, "the race happened while claims were flowing"
        await set_paused(sessions, paused=False, actor="test")
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

    try:
        repository = JobRepository(sessions)
        job_id = (await _queued(repository, 1))[0]
        event.listen(engine.sync_engine, "before_cursor_execute", seen)
        assert await repository.claim(job_id, "Worker started job (t).") is Claim.CLAIMED
        assert statements == ["UPDATE", "INSERT"]
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", seen)
        await engine.dispose()
