"""Sending outbox rows to the Mensageria: by the order right after queuing, and by the drain."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

import httpx
from sqlalchemy import func, update
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.clients import MensageriaClient, UpstreamError, error_code
from activities.sisbajud.models import SisbajudOutbox
from activities.sisbajud.outbox_record import Outcome, SendRecorder
from shared.db.models import utcnow
from shared.settings import Settings

# How long a sender holds the rows it is sending: beyond the order's bounded send (and its
# store step's timeout), and beyond the drain stage's timeout.
ORDER_CLAIM_SECONDS = 45.0
DRAIN_CLAIM_SECONDS = 150.0
log = logging.getLogger("esteira.sisbajud")


class ResultSender:
    """POSTs rows under their own `X-Idempotency` keys and records what became of each."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession],
                 mensageria: MensageriaClient) -> None:
        self._settings = settings
        self._mensageria = mensageria
        self._recorder = SendRecorder(sessions)

    async def send_in_turn(self, rows: list[SisbajudOutbox]) -> int:
        """Send one order's claimed rows oldest first, stopping at the first that fails (it and
        the rest wait for the drain, so the order's states still arrive in the order they
        were queued); returns how many went out."""
        outcomes: list[Outcome] = []
        try:
            for row in rows:
                outcome = await self.send(row)
                outcomes.append(outcome)
                if outcome[1] != "sent":
                    break
        finally:
            # Shielded: a send cut short (its time is up, its store step cancelled) still
            # records what went out and releases the rest now, not when the claim expires.
            await asyncio.shield(self.record(outcomes, untried=rows[len(outcomes):]))
        return sum(o[1] == "sent" for o in outcomes)

    async def send(self, row: SisbajudOutbox) -> Outcome:
        """POST one result; what became of it (nothing is written yet)."""
        try:
            response = await self._mensageria.post_result(row.order_id, row.idempotency_key,
                                                          row.payload)
            status = response.status_code
            detail = f"{status} {error_code(response) or ''} {response.text[:200]}"
        except httpx.HTTPError as exc:
            status, detail = None, f"{type(exc).__name__}: {exc}"
        values: dict = {"attempts": row.attempts + 1, "last_status": status}
        if status is not None and 200 <= status < 300:
            values.update(state="SENT", sent_at=utcnow(), last_error=None)
            return row, "sent", values, detail
        if UpstreamError(status).retryable:
            sis = self._settings.sisbajud
            delay = min(sis.outbox_retry_initial_seconds * 2 ** row.attempts,
                        sis.outbox_retry_max_seconds)
            values.update(next_attempt_at=utcnow() + timedelta(seconds=delay), last_error=detail)
            return row, "retry", values, detail
        values.update(state="PARKED", last_error=detail)
        return row, "parked", values, detail

    async def record(self, outcomes: list[Outcome],
                     untried: Iterable[SisbajudOutbox] = ()) -> None:
        """Each sent row's new state (and an alarm per refused one) committed, and the
        claim on `untried` rows given up; a row another sender already settled keeps its
        state."""
        untried_ids = [r.id for r in untried]
        if outcomes or untried_ids:
            await self._recorder.record(outcomes, untried_ids)


async def sendable(session: AsyncSession, rows: Iterable[SisbajudOutbox]
                   ) -> dict[str, list[SisbajudOutbox]]:
    """Due rows by order, without those queued after a row of the same order that is still
    backing off (sending them first would tell the Mensageria the states out of order)."""
    by_order: dict[str, list[SisbajudOutbox]] = {}
    for row in rows:
        by_order.setdefault(row.order_id, []).append(row)
    if not by_order:
        return by_order
    waiting = dict((await session.exec(
        select(SisbajudOutbox.order_id, func.min(SisbajudOutbox.id))
        .where(SisbajudOutbox.state == "PENDING", SisbajudOutbox.next_attempt_at > utcnow(),
               SisbajudOutbox.order_id.in_(list(by_order)))  # type: ignore[attr-defined]
        .group_by(SisbajudOutbox.order_id))).all())
    return {order_id: [r for r in pending if r.id is not None
                       and (order_id not in waiting or r.id < waiting[order_id])]
            for order_id, pending in by_order.items()}


async def claim_order(session: AsyncSession, order_id: str) -> list[SisbajudOutbox]:
    """The order's pending rows that are due, oldest first, up to the first one still
    backing off, claimed (in the caller's transaction) for its own send."""
    rows = (await session.exec(
        select(SisbajudOutbox).where(SisbajudOutbox.order_id == order_id,
                                     SisbajudOutbox.state == "PENDING")
        .order_by(SisbajudOutbox.id))).all()
    now, due = utcnow(), []
    for row in rows:
        if _aware(row.next_attempt_at) > now:
            break
        due.append(row)
    await claim(session, due, ORDER_CLAIM_SECONDS)
    return due


async def claim(session: AsyncSession, rows: list[SisbajudOutbox], seconds: float) -> None:
    """Make `rows` not due for `seconds`: the other sender (the order's own send or the drain)
    leaves them alone meanwhile, and they come due again if this one dies."""
    if rows:
        await session.exec(update(SisbajudOutbox).where(  # type: ignore[call-overload]
            SisbajudOutbox.id.in_([r.id for r in rows]),  # type: ignore[union-attr]
        ).values(next_attempt_at=utcnow() + timedelta(seconds=seconds))
            .execution_options(synchronize_session=False))


async def send_bounded(sender: ResultSender, rows: list[SisbajudOutbox],
                       timeout: float) -> None:
    """The order's own send, never longer than `timeout` and never failing its caller: what
    did not go out is the drain's."""
    if not rows:
        return
    try:
        await asyncio.wait_for(sender.send_in_turn(rows), timeout)
    except Exception as exc:  # the rows are queued; the drain is the reconciler
        log.warning("Results of order %s left for the drain: %s: %s", rows[0].order_id,
                    type(exc).__name__, exc)


def _aware(moment: datetime) -> datetime:
    """SQLite hands timestamps back naive (they are stored in UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
