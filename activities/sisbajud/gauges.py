"""The store readings behind the SISBAJUD gauges, shared by the tick and the API's scrape."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.metrics import ORPHANS_OPEN, OUTBOX_AGE, OUTBOX_DEPTH, UNCERTAIN_WRITES
from activities.sisbajud.models import (
    SisbajudHumanDecision,
    SisbajudOrphan,
    SisbajudOutbox,
    SisbajudWrite,
)
from shared.db.models import as_utc, utcnow

# Writes without a known effect: one without proof, and one the ledger deferred.
UNCERTAIN_STATES = ("INDETERMINATE", "DEFERRED")


async def uncertain_writes(session: AsyncSession) -> dict[str, int]:
    """Ledger writes without a known effect, by state."""
    return dict((await session.exec(
        select(SisbajudWrite.state, func.count())
        .where(SisbajudWrite.state.in_(UNCERTAIN_STATES))  # type: ignore[attr-defined]
        .group_by(SisbajudWrite.state))).all())


async def outbox_backlog(session: AsyncSession) -> tuple[int, datetime | None]:
    """Results waiting in the outbox, and when the oldest was queued."""
    depth, oldest = (await session.exec(
        select(func.count(), func.min(SisbajudOutbox.created_at))
        .where(SisbajudOutbox.state == "PENDING"))).one()
    return depth, oldest


async def orphans_recorded(session: AsyncSession) -> int:
    """Orphan operations on record."""
    return (await session.exec(select(func.count()).select_from(SisbajudOrphan))).one()


async def open_decisions(session: AsyncSession) -> dict[str | None, int]:
    """Open human decisions, by disposition (None: no disposition)."""
    return dict((await session.exec(
        select(SisbajudHumanDecision.disposition, func.count())
        .where(SisbajudHumanDecision.resolved_at.is_(None))  # type: ignore[union-attr]
        .group_by(SisbajudHumanDecision.disposition))).all())


def set_uncertain(counts: dict[str, int]) -> None:
    """`esteira_sisbajud_uncertain_writes` per state (0 for a state with none)."""
    for state in UNCERTAIN_STATES:
        UNCERTAIN_WRITES.labels(state).set(counts.get(state, 0))


def set_outbox(depth: int, oldest: datetime | None) -> None:
    """Outbox depth and the age of its oldest row (0 when empty)."""
    OUTBOX_DEPTH.set(depth)
    OUTBOX_AGE.set(max(0.0, (utcnow() - as_utc(oldest)).total_seconds()) if oldest else 0)


def set_orphans(count: int) -> None:
    """Orphan operations on record."""
    ORPHANS_OPEN.set(count)
