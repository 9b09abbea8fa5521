"""Recording what became of sent results: senders that finish together share one commit."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from sqlalchemy import bindparam, update
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.contracts.orders import AlarmCode
from activities.sisbajud.metrics import RESULTS_SENT
from activities.sisbajud.models import SisbajudOutbox
from activities.sisbajud.store import raise_alarm
from shared.db.models import utcnow

# (row, "sent" | "retry" | "parked", the row's new values, the failure's detail)
Outcome = tuple[SisbajudOutbox, str, dict, str]


@dataclass
class _Entry:
    outcomes: list[Outcome]
    untried_ids: list[int | None]
    done: bool = False


class SendRecorder:
    """Group commit: what is handed in while a write is in flight goes out in the next write,
    so a hundred orders sending at once cost a few transactions instead of a hundred; each
    caller returns only once its own outcomes are committed."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions
        self._lock = asyncio.Lock()
        self._waiting: list[_Entry] = []

    async def record(self, outcomes: list[Outcome], untried_ids: list[int | None]) -> None:
        """Each row's new state (an alarm per refused one) and the claim on `untried_ids`
        given up; a row another sender already settled keeps its state."""
        entry = _Entry(outcomes, untried_ids)
        self._waiting.append(entry)
        async with self._lock:
            if entry.done:
                return  # the write before ours took it along
            batch, self._waiting = self._waiting, []
            try:
                await self._write(batch)
            except BaseException:
                # Not written: the next writer takes the others along (they wait for the lock).
                self._waiting[:0] = [e for e in batch if e is not entry]
                raise
            for written in batch:
                written.done = True
        for written in batch:
            for _, outcome, _, _ in written.outcomes:
                RESULTS_SENT.labels(outcome).inc()

    async def _write(self, batch: list[_Entry]) -> None:
        untried = [row_id for entry in batch for row_id in entry.untried_ids]
        async with self._sessions() as session:
            if untried:
                await session.exec(update(SisbajudOutbox).where(  # type: ignore[call-overload]
                    SisbajudOutbox.id.in_(untried),  # type: ignore[union-attr]
                    SisbajudOutbox.state == "PENDING",
                ).values(next_attempt_at=utcnow())
                    .execution_options(synchronize_session=False))
            # One executemany per shape of new values: the write lock is held for a few
            # round trips through the event loop, not one per row.
            shapes: dict[tuple[str, ...], list[dict]] = {}
            for entry in batch:
                for row, _, values, _ in entry.outcomes:
                    shapes.setdefault(tuple(sorted(values)), []).append(
                        {**{f"new_{k}": v for k, v in values.items()}, "row_id": row.id})
            connection = await session.connection()
            for names, params in shapes.items():
                await connection.execute(update(SisbajudOutbox).where(
                    SisbajudOutbox.id == bindparam("row_id"),
                    SisbajudOutbox.state == "PENDING",
                ).values({name: bindparam(f"new_{name}") for name in names}), params)
            for entry in batch:
                for row, outcome, _, detail in entry.outcomes:
                    if outcome == "parked":
                        await raise_alarm(session, AlarmCode.RESULT_REJECTED.value,
                                          f"Mensageria refused result {row.idempotency_key}: "
                                          f"{detail}", order_id=row.order_id)
            await session.commit()
