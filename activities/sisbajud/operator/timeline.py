"""One order's timeline as the operator reads it: every execution state sent to the Mensageria
(with its key), every ledger write (with its key and transaction), every human decision; and
the day's execution states per hour, for the console's chart."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlmodel import col, select

from activities.sisbajud.models import (
    SisbajudHumanDecision,
    SisbajudOrder,
    SisbajudOutbox,
    SisbajudWrite,
)
from activities.sisbajud.operator.decisions import Decision
from shared.db.engine import Sessions
from shared.db.models import as_utc
from shared.errors import ErrorCode, EsteiraError

EntryKind = Literal["result", "write", "decision"]
# The result's `executionState` as the outbox keeps it (its wire shape).
EXECUTION_STATE = "executionState"
UNKNOWN_STATE = "UNKNOWN"


@dataclass(frozen=True)
class TimelineEntry:
    """One thing that happened to the order: when, what kind, its state, its key (a result's
    or a write's idempotency key, a decision's id), the ledger transaction, a detail line."""

    at: datetime
    kind: EntryKind
    revision: int
    state: str
    key: str
    transaction_id: str | None
    detail: str


@dataclass(frozen=True)
class OrderTimeline:
    """The order, its rows by kind, and all of them as one list, oldest first."""

    order: SisbajudOrder
    results: list[SisbajudOutbox]
    writes: list[SisbajudWrite]
    decisions: list[Decision]
    entries: list[TimelineEntry]


@dataclass(frozen=True)
class StateCount:
    """How many orders reached `state` within the hour starting at `hour`."""

    hour: datetime
    state: str
    orders: int


def _result_entry(row: SisbajudOutbox) -> TimelineEntry:
    payload = row.payload or {}
    sent = f"sent {as_utc(row.sent_at):%H:%M:%S}" if row.sent_at else row.state.lower()
    effect = payload.get("effect")
    return TimelineEntry(
        at=as_utc(row.created_at), kind="result", revision=row.revision,
        state=str(payload.get(EXECUTION_STATE) or UNKNOWN_STATE), key=row.idempotency_key,
        transaction_id=payload.get("transactionId"),
        detail=f"{sent}; effect {effect}" + (f"; {row.last_error}" if row.last_error else ""))


def _write_entry(row: SisbajudWrite) -> TimelineEntry:
    amount = row.applied_amount or row.total
    by = f"; resolved by {row.resolved_by}" if row.resolved_by else ""
    return TimelineEntry(
        at=as_utc(row.created_at), kind="write", revision=row.revision, state=row.state,
        key=row.idempotency_key, transaction_id=row.transaction_id,
        detail=f"{row.kind} {amount} on {row.block_alias}{by}")


def _decision_entry(decision: Decision) -> TimelineEntry:
    if decision.open:
        status = (f"proposed by {decision.proposed_by}" if decision.proposed_by
                  else "waiting for a person")
    else:
        status = f"resolved by {decision.resolved_by}"
    return TimelineEntry(
        at=as_utc(decision.created_at), kind="decision", revision=decision.revision,
        state="OPEN" if decision.open else "RESOLVED", key=str(decision.id),
        transaction_id=(decision.resolution or {}).get("transactionId"),
        detail=f"{decision.reason}: {status}")


class Timeline:
    """The reads behind the order page and the console's chart."""

    def __init__(self, sessions: Sessions) -> None:
        self._sessions = sessions

    async def order(self, order_id: str) -> OrderTimeline:
        """The order's results, writes and decisions, and one list of them, oldest first."""
        async with self._sessions() as session:
            order = await session.get(SisbajudOrder, order_id)
            if order is None:
                raise EsteiraError(ErrorCode.NOT_FOUND, f"No order {order_id}.")
            results = list((await session.exec(select(SisbajudOutbox).where(
                SisbajudOutbox.order_id == order_id).order_by(col(SisbajudOutbox.id)))).all())
            writes = list((await session.exec(select(SisbajudWrite).where(
                SisbajudWrite.order_id == order_id).order_by(
                col(SisbajudWrite.created_at)))).all())
            decisions = [Decision.of(row) for row in (await session.exec(
                select(SisbajudHumanDecision).where(
                    SisbajudHumanDecision.order_id == order_id).order_by(
                    col(SisbajudHumanDecision.id)))).all()]
        entries = sorted([*map(_result_entry, results), *map(_write_entry, writes),
                          *map(_decision_entry, decisions)], key=lambda e: e.at)
        return OrderTimeline(order, results, writes, decisions, entries)

    async def states_by_hour(self, since: datetime) -> list[StateCount]:
        """Per hour since `since`, how many orders were reported in each execution state
        (each state sent to the Mensageria counts its order once in that hour)."""
        async with self._sessions() as session:
            rows = (await session.exec(select(SisbajudOutbox.created_at,
                                              SisbajudOutbox.order_id,
                                              SisbajudOutbox.payload).where(
                col(SisbajudOutbox.created_at) >= since))).all()
        seen = {(_hour(as_utc(at)), order_id,
                 str((payload or {}).get(EXECUTION_STATE) or UNKNOWN_STATE))
                for at, order_id, payload in rows}
        counts = Counter((hour, state) for hour, _order, state in seen)
        return [StateCount(hour, state, n) for (hour, state), n in sorted(counts.items())]


def _hour(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)

