"""Send outcomes handed in together are committed together, and none is lost to a failure."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest_asyncio
from sqlmodel import select

from activities.sisbajud.models import SisbajudOutbox
from activities.sisbajud.outbox_record import SendRecorder
from shared.db.engine import create_engine, session_factory
from shared.db.models import as_utc, utcnow


class CountingSessions:
    """A session factory that counts transactions opened; the first may fail."""

    def __init__(self, sessions, *, fail_first: bool = False) -> None:
        self._sessions, self._fail_first, self.opened = sessions, fail_first, 0

    def __call__(self):
        self.opened += 1
        if self._fail_first and self.opened == 1:
            raise ConnectionError("store down")
        return self._sessions()


@pytest_asyncio.fixture
async def sessions(database_url: str) -> AsyncIterator:
    engine = create_engine(database_url)
    try:
        yield session_factory(engine)
    finally:
        await engine.dispose()


async def _pending(sessions, count: int) -> list[SisbajudOutbox]:
    now = utcnow()
    rows = [SisbajudOutbox(idempotency_key=f"o-{i}:1:1", order_id=f"o-{i}", revision=1,
                           payload={}, state="PENDING", created_at=now, next_attempt_at=now)
            for i in range(count)]
    async with sessions() as session:
        session.add_all(rows)
        await session.commit()
    return rows


def _sent(row: SisbajudOutbox):
    return (row, "sent", {"attempts": row.attempts + 1, "last_status": 201, "state": "SENT",
                          "sent_at": utcnow(), "last_error": None}, "201")


async def _states(sessions) -> list[str]:
    async with sessions() as session:
        rows = (await session.exec(select(SisbajudOutbox).order_by(SisbajudOutbox.id))).all()
    return [row.state for row in rows]


async def test_outcomes_recorded_at_once_share_a_transaction(sessions):
    rows = await _pending(sessions, 6)
    counting = CountingSessions(sessions)
    recorder = SendRecorder(counting)
    await asyncio.gather(*(recorder.record([_sent(row)], []) for row in rows))
    assert await _states(sessions) == ["SENT"] * 6
    # The first write goes alone; the five handed in meanwhile go in the next one.
    assert counting.opened == 2


async def test_a_failed_write_loses_only_its_callers_outcome(sessions):
    rows = await _pending(sessions, 4)
    recorder = SendRecorder(CountingSessions(sessions, fail_first=True))
    results = await asyncio.gather(*(recorder.record([_sent(row)], []) for row in rows),
                                   return_exceptions=True)
    assert isinstance(results[0], ConnectionError) and results[1:] == [None] * 3
    # The first caller was told (its row stays due for the drain); the others were written.
    assert await _states(sessions) == ["PENDING", "SENT", "SENT", "SENT"]


async def test_sent_retried_and_untried_rows_each_take_their_own_values(sessions):
    rows = await _pending(sessions, 3)
    later = utcnow() + timedelta(minutes=5)
    retry = (rows[1], "retry", {"attempts": 1, "last_status": 503, "next_attempt_at": later,
                                "last_error": "503 busy"}, "503 busy")
    await SendRecorder(sessions).record([_sent(rows[0]), retry], [rows[2].id])
    async with sessions() as session:
        sent, retried, untried = [await session.get(SisbajudOutbox, r.id) for r in rows]
    assert (sent.state, sent.attempts, sent.last_status) == ("SENT", 1, 201)
    assert sent.sent_at is not None
    assert (retried.state, retried.attempts, retried.last_error) == ("PENDING", 1, "503 busy")
    assert as_utc(retried.next_attempt_at) == later
    assert (untried.state, untried.attempts) == ("PENDING", 0)
    assert as_utc(untried.next_attempt_at) <= utcnow()
