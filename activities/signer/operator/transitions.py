"""Following job transitions: the `job_history` table read after a cursor, in id order."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, or_
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.models.jobs import JobHistory
from shared.db.models import as_utc, utcnow
from shared.errors import ErrorCode, EsteiraError

# On PostgreSQL ids are handed out before commit: a missing id may be a transition still
# committing. It is waited for this long (then taken as a rollback or a deletion).
GAP_WAIT = timedelta(seconds=5)
BATCH = 500
MAX_PENDING = 1000


@dataclass
class TransitionTail:
    """Transitions after a cursor; each comes with the cursor to resume after it."""

    sessions: async_sessionmaker[AsyncSession]
    after: int
    job_id: str | None = None
    pending: dict[int, datetime] = field(default_factory=dict)  # missing id -> give-up time

    @classmethod
    async def start(cls, sessions: async_sessionmaker[AsyncSession], *, cursor: str,
                    job_id: str | None) -> TransitionTail:
        """From a cursor of an earlier transition, or from now on when `cursor` is empty."""
        if cursor:
            try:
                after = int(cursor)
            except ValueError:
                raise EsteiraError(ErrorCode.REQUEST_INVALID,
                                   "The cursor is not valid.") from None
            if after < 0:
                raise EsteiraError(ErrorCode.REQUEST_INVALID, "The cursor is not valid.")
        else:
            after = await _last_id(sessions)
        return cls(sessions, after, job_id)

    @property
    def cursor(self) -> int:
        """Every transition up to this id was delivered (or waited out)."""
        return min(self.pending) - 1 if self.pending else self.after

    async def poll(self) -> list[tuple[JobHistory, str]]:
        """The transitions recorded since the last poll, with their resume cursors."""
        now = utcnow()
        async with self.sessions() as session:
            newer = col(JobHistory.id) > self.after
            if self.pending:
                newer = or_(newer, col(JobHistory.id).in_(list(self.pending)))
            rows = list((await session.exec(
                select(JobHistory).where(newer).order_by(col(JobHistory.id)).limit(BATCH))).all())
        if not rows and (top := await _last_id(self.sessions)) < self.after:
            # The history was cleared and SQLite reuses ids: follow from the new top.
            self.after, self.pending = top, {}
        for row in rows:
            assert row.id is not None  # a stored row has its id
            if self.pending.pop(row.id, None) is None and row.id > self.after:
                if as_utc(row.at) > now - GAP_WAIT:
                    self._await_gap(self.after + 1, row.id, now + GAP_WAIT)
                self.after = row.id
        self.pending = {i: t for i, t in self.pending.items() if t > now}
        # A row's cursor: everything up to it was sent once it is (later rows of this batch
        # are still to come, so it stops short of them).
        settled = self.cursor
        cursors = [min(settled, later.id - 1) for later in rows[1:]] + [settled] if rows else []
        return [(row, str(cursor)) for row, cursor in zip(rows, cursors, strict=True)
                if self.job_id is None or row.job_id == self.job_id]

    def _await_gap(self, first: int, end: int, until: datetime) -> None:
        for missing in range(max(first, end - MAX_PENDING), end):
            self.pending[missing] = until


async def _last_id(sessions: async_sessionmaker[AsyncSession]) -> int:
    async with sessions() as session:
        return (await session.exec(select(func.max(JobHistory.id)))).one() or 0
