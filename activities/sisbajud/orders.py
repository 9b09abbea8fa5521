"""Order activities: fetch from the Mensageria, claim a revision, ownership, settle."""

from __future__ import annotations

import logging

import httpx
from sqlalchemy import update
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity

from activities.sisbajud.clients import MensageriaClient, UpstreamError, error_code
from activities.sisbajud.contracts.names import (
    BEGIN_REVISION_ACTIVITY,
    CHECK_OWNERSHIP_ACTIVITY,
    FETCH_ORDER_ACTIVITY,
    QUEUE_RESULT_ACTIVITY,
    SETTLE_ACTIVITY,
)
from activities.sisbajud.contracts.orders import (
    BeginRevisionInput,
    BeginRevisionResult,
    CheckOwnershipInput,
    FetchOrderInput,
    FetchOrderResult,
    FetchStatus,
    OrderState,
    OwnershipResult,
    QueueResultInput,
    SettleInput,
    SettleResult,
    decision_deadline,
)
from activities.sisbajud.errors import SisbajudErrorCode, fail
from activities.sisbajud.metrics import ORDERS
from activities.sisbajud.models import (
    SisbajudHumanDecision,
    SisbajudOrder,
    SisbajudOutbox,
)
from activities.sisbajud.outbox import ResultSender, claim_order, send_bounded
from activities.sisbajud.ownership import check_ownership
from activities.sisbajud.store import DOMAIN, insert_ignore, raise_alarm
from activities.sisbajud.wire import InvalidOrder, order_from_wire, result_to_wire
from activities.sisbajud.write_effects import resolve_write
from shared.db.models import as_utc, utcnow
from shared.events import record_event
from shared.heartbeat import heartbeats
from shared.logs import props
from shared.settings import Settings

log = logging.getLogger("esteira.sisbajud")
# The order's own send of a result it queued: well inside the store step's 30 s, so a slow
# Mensageria hands the result to the drain instead of holding the order up.
DIRECT_SEND_SECONDS = 10.0


async def fetch_order(mensageria: MensageriaClient, order_id: str) -> FetchOrderResult:
    """The seed's fetch table: 200 run, 404/410 withdrawn, retry transient (a retryable
    `mensageria.unavailable`), park the rest; the activity's and the gateway's."""
    try:
        response = await mensageria.fetch_order(order_id)
    except httpx.HTTPError as exc:
        raise fail(SisbajudErrorCode.MENSAGERIA_UNAVAILABLE,
                   f"order fetch failed: {type(exc).__name__}: {exc}") from exc
    status = response.status_code
    if status == 200:
        try:
            order = order_from_wire(response.json())
        except (InvalidOrder, ValueError) as exc:
            return FetchOrderResult(status=FetchStatus.PARKED, http_status=200, detail=str(exc))
        if order.order_id != order_id:
            return FetchOrderResult(status=FetchStatus.PARKED, http_status=200,
                                    detail=f"got order {order.order_id} instead")
        return FetchOrderResult(status=FetchStatus.FOUND, http_status=200, order=order)
    if status in (404, 410):
        return FetchOrderResult(status=FetchStatus.WITHDRAWN, http_status=status)
    if UpstreamError(status).retryable:
        raise fail(SisbajudErrorCode.MENSAGERIA_UNAVAILABLE, f"order fetch answered {status}")
    return FetchOrderResult(status=FetchStatus.PARKED, http_status=status,
                            detail=f"order fetch answered {status} {error_code(response)}")


class OrderActivities:
    """Activities around one order's lifecycle; dependencies come in through `__init__`."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession],
                 http: httpx.AsyncClient) -> None:
        self._settings = settings
        self._sessions = sessions
        self._http = http
        self._mensageria = MensageriaClient.from_settings(http, settings)
        self._sender = ResultSender(settings, sessions, self._mensageria)

    @activity.defn(name=FETCH_ORDER_ACTIVITY)
    @heartbeats
    async def fetch_order(self, request: FetchOrderInput) -> FetchOrderResult:
        """The order from the Mensageria, classified by the seed's fetch table."""
        return await fetch_order(self._mensageria, request.order_id)

    @activity.defn(name=BEGIN_REVISION_ACTIVITY)
    async def begin_revision(self, request: BeginRevisionInput) -> BeginRevisionResult:
        """Claim the revision unless this or a later one was begun by another run; a claim
        that starts queues `accepted` (if given) in its transaction and then sends it."""
        async with self._sessions() as session:
            started = await self._claim(session, request)
            pending: list[SisbajudOutbox] = []
            if started and request.accepted is not None:
                await _queue(session, request.accepted, mark_order=False)
                pending = await claim_order(session, request.order.order_id)
            await session.commit()
        await self._send(pending)
        return BeginRevisionResult(started=started)

    async def _claim(self, session: AsyncSession, request: BeginRevisionInput) -> bool:
        order = request.order
        accepted = request.accepted.result.execution_state.value if request.accepted else None
        values = dict(
            revision=order.revision, run_id=request.run_id, operation=order.operation.value,
            institution_id=order.institution_id, parent_order_id=order.parent_order_id,
            document=order.document, requested_amount=str(order.amount),
            state=OrderState.EXECUTING.value, execution_state=accepted, effect=None,
            reason_code=None, executed_amount=None, transaction_id=None,
            deadline=order.deadline, detail=None, updated_at=utcnow())
        if await insert_ignore(session, SisbajudOrder,
                               {"order_id": order.order_id, "created_at": utcnow(), **values},
                               ["order_id"]):
            return True
        row = await session.get(SisbajudOrder, order.order_id)
        assert row is not None
        if row.revision == order.revision and row.run_id == request.run_id:
            return True  # this run's claim, retried
        # Begun by another run (or superseded): a redelivery, nothing to do. Rows only
        # settled from a fetch (withdrawn, parked) were never begun and may be.
        if row.revision > order.revision or (row.revision == order.revision
                                             and row.run_id is not None):
            return False
        # Conditional on what was read: of two racing runs, one wins.
        result = await session.exec(
            update(SisbajudOrder)
            .where(SisbajudOrder.order_id == order.order_id,
                   SisbajudOrder.revision == row.revision,
                   SisbajudOrder.state == row.state)
            .values(**values))  # type: ignore[call-overload]
        return bool(result.rowcount)

    @activity.defn(name=CHECK_OWNERSHIP_ACTIVITY)
    async def check_ownership(self, request: CheckOwnershipInput) -> OwnershipResult:
        """Owned, foreign or unconfigured, against the subject of our Midaz token."""
        return await check_ownership(self._settings, self._sessions, self._http,
                                     request.institution_id)

    @activity.defn(name=QUEUE_RESULT_ACTIVITY)
    async def queue_result(self, request: QueueResultInput) -> SettleResult:
        """A progress result into the outbox under its own key; the order row shows it."""
        async with self._sessions() as session:
            queued = await _queue(session, request)
            pending = await claim_order(session, request.result.order_id)
            await session.commit()
        await self._send(pending)
        return SettleResult(changed=queued)

    @activity.defn(name=SETTLE_ACTIVITY)
    async def settle(self, request: SettleInput) -> SettleResult:
        """Order row, outbox row, alarm and human decision in one transaction (idempotent)."""
        async with self._sessions() as session:
            row = await session.get(SisbajudOrder, request.order_id)
            if row is None:
                row = SisbajudOrder(order_id=request.order_id, revision=request.revision,
                                    state="")
            elif row.revision > request.revision:
                return SettleResult(changed=False)  # a later revision owns the row now
            new = (request.state.value, _value(request.effect), _value(request.reason_code))
            moved = row.revision != request.revision
            changed = moved or (row.state, row.effect, row.reason_code) != new
            if moved:
                row.revision, row.run_id = request.revision, None
            row.state, row.effect, row.reason_code = new
            row.executed_amount = _text(request.executed_amount) or row.executed_amount
            row.transaction_id = request.transaction_id or row.transaction_id
            row.execution_state = _value(request.result.execution_state if request.result else None)
            row.detail = request.detail or None
            row.updated_at = utcnow()
            session.add(row)
            if request.result is not None and request.result_key:
                await insert_ignore(session, SisbajudOutbox, {
                    "idempotency_key": request.result_key, "order_id": request.order_id,
                    "revision": request.revision, "payload": result_to_wire(request.result),
                    "state": "PENDING", "attempts": 0, "created_at": utcnow(),
                    "next_attempt_at": utcnow()}, ["idempotency_key"])
            if changed and request.alarm is not None:
                await raise_alarm(session, request.alarm.value,
                                  f"Order {request.order_id} r{request.revision}: "
                                  f"{request.detail or request.state.value}",
                                  order_id=request.order_id, revision=request.revision)
            if request.human_reason is not None:
                deadline = as_utc(row.deadline) if row.deadline is not None else None
                await insert_ignore(session, SisbajudHumanDecision, {
                    "order_id": request.order_id, "revision": request.revision,
                    "reason": request.human_reason.value, "detail": request.detail or None,
                    "disposition": _value(request.human_disposition),
                    "decide_by": decision_deadline(
                        deadline, self._settings.sisbajud.response_deadline_margin_seconds),
                    "created_at": utcnow()}, ["order_id", "revision", "reason"])
            if request.close_decisions:
                await _close_decisions(session, request)
            if request.resolution is not None:
                await _resolve_write(session, request)
            pending = (await claim_order(session, request.order_id)
                       if request.result is not None and request.result_key else [])
            await session.commit()
        await self._send(pending)
        if changed:
            ORDERS.labels(new[0], new[1] or "", new[2] or "").inc()
            log.info("Order %s r%s %s %s %s", request.order_id, request.revision, *new,
                     extra=props(OrderId=request.order_id, Revision=request.revision,
                                 State=new[0], Effect=new[1], ReasonCode=new[2]))
        return SettleResult(changed=changed)

    async def _send(self, pending: list[SisbajudOutbox]) -> None:
        # Queued and committed first, so a send that fails (or a crash) leaves the row to
        # the tick's drain under the same key; sent now, the result needs no tick at all.
        await send_bounded(self._sender, pending, DIRECT_SEND_SECONDS)


async def _queue(session: AsyncSession, request: QueueResultInput, *,
                 mark_order: bool = True) -> bool:
    """Add a progress result to the outbox (once per key) and, unless the caller wrote it
    already, its state to the order row; True when it was new."""
    result = request.result
    queued = await insert_ignore(session, SisbajudOutbox, {
        "idempotency_key": request.result_key, "order_id": result.order_id,
        "revision": result.order_revision, "payload": result_to_wire(result),
        "state": "PENDING", "attempts": 0, "created_at": utcnow(),
        "next_attempt_at": utcnow()}, ["idempotency_key"])
    if queued and mark_order:
        await session.exec(update(SisbajudOrder).where(  # type: ignore[call-overload]
            SisbajudOrder.order_id == result.order_id,
            SisbajudOrder.revision == result.order_revision,
        ).values(execution_state=result.execution_state.value))
    return queued


async def _close_decisions(session: AsyncSession, request: SettleInput) -> None:
    """Mark the revision's open decisions resolved, with who resolved them and why."""
    res = request.resolution
    actor = res.actor if res else "executor"
    why = res.reason if res else (request.detail or "the ledger proved the write")
    closed = await session.exec(update(SisbajudHumanDecision).where(  # type: ignore[call-overload]
        SisbajudHumanDecision.order_id == request.order_id,
        SisbajudHumanDecision.revision == request.revision,
        SisbajudHumanDecision.resolved_at.is_(None),  # type: ignore[union-attr]
    ).values(resolved_at=utcnow(), resolved_by=actor, resolution_reason=why,
             resolution=result_to_wire(request.result) if request.result else None))
    if closed.rowcount:
        await record_event(session, domain=DOMAIN, type="HumanDecisionResolved",
                           message=f"Order {request.order_id} r{request.revision} resolved "
                                   f"by {actor}: {why}",
                           actor=actor, order_id=request.order_id, revision=request.revision,
                           reason=why, result_key=request.result_key)
        log.info("Human decision on %s r%s resolved by %s", request.order_id, request.revision,
                 actor, extra=props(OrderId=request.order_id, Revision=request.revision,
                                    Actor=actor))


async def _resolve_write(session: AsyncSession, request: SettleInput) -> None:
    """A person's confirmed resolution becomes the known effect of the revision's write."""
    res = request.resolution
    assert res is not None
    await resolve_write(session, request.order_id, request.revision, res.effect,
                        res.executed_amount, res.transaction_id, res.actor, res.moved_legs)


def _value(member) -> str | None:
    return member.value if member is not None else None


def _text(amount) -> str | None:
    return str(amount) if amount is not None else None
