"""WatchJobs' cursor over `job_history`: a late-committing transition is waited for, not lost;
a cleared history is followed from its new top."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import delete

from activities.signer.models.jobs import Job, JobHistory
from activities.signer.operator.transitions import GAP_WAIT, TransitionTail
from shared.db.engine import create_engine, session_factory
from shared.db.models import utcnow


async def _history(sessions, job_id: str, history_id: int, *, at=None) -> None:
    async with sessions() as session:
        session.add(JobHistory(id=history_id, job_id=job_id, to_status="Queued",
                               message=f"row {history_id}", at=at or utcnow()))
        await session.commit()


async def test_a_gap_holds_the_cursor_until_the_late_row_arrives(database_url):
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    try:
        job_id = str(uuid.uuid4())
        async with sessions() as session:
            session.add(Job(id=job_id, file_name="a.pdf", original_path="/in/a.pdf",
                            source="watcher", format="Pades", status="Queued"))
            await session.commit()
        await _history(sessions, job_id, 1)
        tail = await TransitionTail.start(sessions, cursor="", job_id=None)
        assert tail.cursor == 1

        # id 3 commits before id 2 (PostgreSQL hands ids out before commit).
        await _history(sessions, job_id, 3)
        [(row, cursor)] = await tail.poll()
        assert (row.id, cursor) == (3, "1"), "the cursor must not pass the missing id 2"
        await _history(sessions, job_id, 2)
        [(row, cursor)] = await tail.poll()
        assert (row.id, cursor) == (2, "3")
        assert await tail.poll() == []

        # An old gap (a deleted job's rows) is not waited for.
        await _history(sessions, job_id, 9, at=utcnow() - 2 * GAP_WAIT - timedelta(seconds=1))
        [(row, cursor)] = await tail.poll()
        assert (row.id, cursor) == (9, "9")

        # Clear Jobs empties the history; SQLite then starts ids again from 1.
        async with sessions() as session:
            await session.exec(delete(JobHistory))
            await session.commit()
        assert await tail.poll() == [] and tail.cursor == 0
        await _history(sessions, job_id, 1)
        [(row, _)] = await tail.poll()
        assert row.id == 1
    finally:
        await engine.dispose()
