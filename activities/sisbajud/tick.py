"""The tick's stages: ingest accepted notices, orphans, monitoring, drain the outbox."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import httpx
from sqlalchemy import update
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy

from activities.sisbajud.clients import MensageriaClient
from activities.sisbajud.contracts.names import (
    NOTICE_SIGNAL,
    ORDER_WORKFLOW,
    STAGE_DRAIN_ACTIVITY,
    STAGE_INGEST_ACTIVITY,
    STAGE_MONITOR_ACTIVITY,
    STAGE_ORPHANS_ACTIVITY,
)
from activities.sisbajud.contracts.orders import (
    NoticeSignal,
    OrderState,
    RunOrderInput,
    StageName,
    StageResult,
    TickInput,
    order_workflow_id,
)
from activities.sisbajud.gauges import (
    orphans_recorded,
    outbox_backlog,
    set_orphans,
    set_outbox,
    set_uncertain,
    uncertain_writes,
)
from activities.sisbajud.models import (
    SisbajudNotice,
    SisbajudOrder,
    SisbajudOutbox,
)
from activities.sisbajud.monitors import check_monitors
from activities.sisbajud.orphans import OrphanChecker
from activities.sisbajud.outbox import (
    DRAIN_CLAIM_SECONDS,
    Outcome,
    ResultSender,
    claim,
    sendable,
)
from shared.contracts import search_attributes
from shared.db.models import utcnow
from shared.heartbeat import heartbeats
from shared.logs import props
from shared.settings import Settings
from shared.visibility import start_workflow

TemporalProvider = Callable[[], Awaitable[Client]]
# Notices (and results) in flight at once: enough to hide the round trips, few enough
# not to crowd the Temporal frontend or the Mensageria.
INGEST_IN_FLIGHT = 16
SEND_IN_FLIGHT = 8
log = logging.getLogger("esteira.sisbajud")


class TickActivities:
    """One activity per stage; each is its own failure domain in the tick workflow."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession],
                 http: httpx.AsyncClient, temporal: TemporalProvider) -> None:
        self._settings = settings
        self._sessions = sessions
        self._sender = ResultSender(settings, sessions,
                                    MensageriaClient.from_settings(http, settings))
        self._temporal = temporal
        self._orphans = OrphanChecker(settings, sessions, http)

    @activity.defn(name=STAGE_INGEST_ACTIVITY)
    @heartbeats
    async def ingest(self, request: TickInput) -> StageResult:
        """Hand each accepted notice to its order's workflow (signal-with-start)."""
        async with self._sessions() as session:
            notices = (await session.exec(
                select(SisbajudNotice).where(SisbajudNotice.state == "ACCEPTED")
                .order_by(SisbajudNotice.id).limit(request.batch_size))).all()
            order_ids = {n.order_id for n in notices}
            begun = {o.order_id: o for o in (await session.exec(
                select(SisbajudOrder).where(SisbajudOrder.order_id.in_(order_ids))  # type: ignore[union-attr]
            )).all()} if order_ids else {}
        duplicates: list[int | None] = []
        by_order: dict[str, list[SisbajudNotice]] = {}
        for notice in notices:
            assert notice.order_id is not None and notice.revision is not None
            order = begun.get(notice.order_id)
            # A redelivery of a deferred revision is handed over: it makes the write go again.
            deferred = (order is not None and order.state == OrderState.DEFERRED
                        and order.revision == notice.revision)
            if (order is not None and order.run_id and order.revision >= notice.revision
                    and not deferred):
                duplicates.append(notice.id)
            else:
                by_order.setdefault(notice.order_id, []).append(notice)
        handed: list[int | None] = []
        try:
            if by_order:
                client = await self._temporal()
                # Orders concurrently (each hands over its own notices in the order they
                # came), so a batch takes a few round trips instead of one per notice.
                gate = asyncio.Semaphore(INGEST_IN_FLIGHT)
                await asyncio.gather(*(self._hand_over(client, gate, request, pending, handed)
                                       for pending in by_order.values()))
        finally:
            # Marked only once their order was started or signalled; one not marked (a crash)
            # is handed over again on the next tick, which its order takes as a redelivery.
            await self._mark({"DUPLICATE": duplicates, "INGESTED": handed})
        failed = len(notices) - len(duplicates) - len(handed)
        return StageResult(stage=StageName.INGEST, ok=failed == 0,
                           done=len(duplicates) + len(handed), failed=failed)

    async def _hand_over(self, client: Client, gate: asyncio.Semaphore, request: TickInput,
                         notices: list[SisbajudNotice], handed: list[int | None]) -> None:
        """Signal-with-start one order's notices in turn; appends each one handed over."""
        async with gate:
            for notice in notices:
                assert notice.order_id is not None and notice.revision is not None
                try:
                    await start_workflow(
                        client, ORDER_WORKFLOW, RunOrderInput(order_id=notice.order_id,
                                                              options=request.options),
                        search_attributes=search_attributes.sisbajud_order(notice.order_id),
                        memo=search_attributes.summary_memo(
                            f"Court order {notice.order_id}, from notice {notice.id} "
                            f"(revision {notice.revision})"),
                        id=order_workflow_id(notice.order_id), task_queue=request.task_queue,
                        # A closed run of the same order may be followed by a new one.
                        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                        start_signal=NOTICE_SIGNAL,
                        start_signal_args=[NoticeSignal(revision=notice.revision,
                                                        notice_id=notice.id)])
                except Exception as exc:  # one bad notice must not stop the batch
                    log.warning("Could not hand notice %s to its order: %s", notice.id, exc,
                                extra=props(NoticeId=notice.id, OrderId=notice.order_id))
                    # Its later revisions wait too, so an order never sees them out of order.
                    return
                handed.append(notice.id)

    async def _mark(self, states: dict[str, list[int | None]]) -> None:
        """One UPDATE per outcome, one commit: notices still ACCEPTED take their new state."""
        if not any(states.values()):
            return
        async with self._sessions() as session:
            for state, ids in states.items():
                if ids:
                    await session.exec(update(SisbajudNotice).where(  # type: ignore[call-overload]
                        SisbajudNotice.id.in_(ids),  # type: ignore[union-attr]
                        SisbajudNotice.state == "ACCEPTED",
                    ).values(state=state, ingested_at=utcnow()))
            await session.commit()

    @activity.defn(name=STAGE_ORPHANS_ACTIVITY)
    @heartbeats
    async def orphans(self, request: TickInput) -> StageResult:
        """Operations on block accounts this executor did not write: detected, never changed."""
        scan = await self._orphans.scan()
        async with self._sessions() as session:
            set_orphans(await orphans_recorded(session))
        return StageResult(stage=StageName.ORPHANS, ok=scan.failed_accounts == 0,
                           done=scan.new_orphans, failed=scan.failed_accounts,
                           detail=f"{scan.accounts} block accounts, {scan.operations} "
                                  f"operations, {scan.new_orphans} new orphans")

    @activity.defn(name=STAGE_MONITOR_ACTIVITY)
    @heartbeats
    async def monitor(self, request: TickInput) -> StageResult:
        """Writes without a known effect, measured; their order workflows re-read the ledger
        and queue a heartbeat on their own durable timers (`EXECUTOR_HEARTBEAT_EVERY`). The
        stage proves each such write has a live, beating monitor: a workflow that is gone
        (terminated, failed) is restarted into its monitoring, one stuck is alarmed."""
        client = await self._temporal()
        check = await check_monitors(self._sessions, client, request.task_queue,
                                     request.options)
        async with self._sessions() as session:
            counts = await uncertain_writes(session)
        set_uncertain(counts)
        return StageResult(stage=StageName.MONITOR, ok=not check.stuck,
                           done=sum(counts.values()),
                           failed=len(check.stuck) + len(check.restarted),
                           detail=f"{counts.get('INDETERMINATE', 0)} indeterminate "
                                  f"({check.live} monitored, {len(check.restarted)} "
                                  f"restarted, {len(check.stuck)} stuck, {check.settled} "
                                  "settled by earlier resolutions), "
                                  f"{counts.get('DEFERRED', 0)} deferred writes")

    @activity.defn(name=STAGE_DRAIN_ACTIVITY)
    @heartbeats
    async def drain(self, request: TickInput) -> StageResult:
        """Send due outbox rows with their own keys (the orders send their own results as
        they queue them; the drain is the reconciler of what they could not send)."""
        async with self._sessions() as session:
            rows = (await session.exec(
                select(SisbajudOutbox).where(SisbajudOutbox.state == "PENDING",
                                             SisbajudOutbox.next_attempt_at <= utcnow())
                .order_by(SisbajudOutbox.id).limit(request.batch_size))).all()
            by_order = await sendable(session, rows)
            claimed = [row for pending in by_order.values() for row in pending]
            await claim(session, claimed, DRAIN_CLAIM_SECONDS)
            await session.commit()
        outcomes: list[Outcome] = []
        gate = asyncio.Semaphore(SEND_IN_FLIGHT)

        async def send_order(pending: list[SisbajudOutbox]) -> None:
            # One order's results leave one at a time, in the order they were queued; after
            # a failure the rest wait, so the Mensageria never hears a later state first.
            async with gate:
                for row in pending:
                    outcomes.append(await self._sender.send(row))
                    if outcomes[-1][1] != "sent":
                        return

        try:
            errors = [e for e in await asyncio.gather(
                *(send_order(pending) for pending in by_order.values()),
                return_exceptions=True) if e is not None]
        finally:
            # Whatever was sent is recorded, in one commit, even if the stage is cancelled;
            # a row sent and not recorded goes again under the same key.
            tried = {row.id for row, *_ in outcomes}
            await self._sender.record(outcomes,
                                      untried=[r for r in claimed if r.id not in tried])
        if errors:
            raise errors[0]
        done = sum(outcome == "sent" for _, outcome, _, _ in outcomes)
        await self._measure()
        return StageResult(stage=StageName.DRAIN, done=done, failed=len(rows) - done)

    async def _measure(self) -> None:
        async with self._sessions() as session:
            set_outbox(*await outbox_backlog(session))
