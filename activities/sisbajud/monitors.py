"""Tick stage 3's proof: each write without proof has a live monitor; a lost one restarts."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import func
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import WorkflowIDReusePolicy
from temporalio.service import RPCError, RPCStatusCode

from activities.sisbajud.contracts.ledger import Leg, Plan, PlanKind, WriteKind
from activities.sisbajud.contracts.names import ORDER_WORKFLOW
from activities.sisbajud.contracts.orders import (
    AlarmCode,
    Effect,
    Operation,
    Order,
    OrderOptions,
    OrderState,
    RunOrderInput,
    order_workflow_id,
)
from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudOrder,
    SisbajudOutbox,
    SisbajudWrite,
)
from activities.sisbajud.store import raise_alarm
from activities.sisbajud.write_effects import resolve_write
from shared.contracts import search_attributes
from shared.db.models import as_utc, utcnow
from shared.visibility import start_workflow
from workflows.sisbajud.carry import Carry, Wait, WaitKind

log = logging.getLogger("esteira.sisbajud")
# A monitor that queued no beat for this many heartbeat periods (plus the slack a write's own
# retries may take before monitoring starts) is stuck.
STUCK_AFTER_BEATS = 3
STUCK_SLACK = timedelta(minutes=5)
# Order states in which the order's workflow monitors its write.
MONITORED_STATES = (OrderState.INDETERMINATE.value, OrderState.HUMAN_DECISION.value)


@dataclass
class MonitorCheck:
    """Writes without proof looked at, monitors restarted, stuck ones alarmed."""

    writes: int = 0
    live: int = 0
    settled: int = 0
    restarted: list[str] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Watched:
    """One write without proof as the store showed it, before Temporal is asked about it."""

    key: str
    order_id: str
    revision: int
    quiet_since: datetime  # its last heartbeat queued, or its last write attempt
    wait: Wait  # the monitoring a restart resumes


async def check_monitors(sessions: async_sessionmaker[AsyncSession], client: Client,
                         task_queue: str, options: OrderOptions) -> MonitorCheck:
    """Every INDETERMINATE write of its order's current revision: its workflow must be running
    and beating; one that is gone is restarted into its monitoring (alarm), one that no
    longer beats is alarmed. Read, then ask Temporal with no transaction open, then write in
    short transactions: on SQLite a write transaction held across network calls would hold
    the database's one write lock and stall every other writer (orders, gateway, API)."""
    async with sessions() as session:
        check = MonitorCheck(settled=await settle_resolved(session))
        await session.commit()
    async with sessions() as session:
        watched = await _watched(session)
    check.writes = len(watched)
    statuses = [await _status(client, w.order_id) for w in watched]
    for w, status in zip(watched, statuses, strict=True):
        if status == WorkflowExecutionStatus.RUNNING:
            if utcnow() - w.quiet_since > _quiet_limit(options):
                check.stuck.append(w.key)
                await _alarm_once(sessions, AlarmCode.LEDGER_MONITOR_STUCK, w,
                                  f"write {w.key} has no heartbeat for {STUCK_AFTER_BEATS} "
                                  "periods; its workflow is running but not monitoring")
            else:
                check.live += 1
            continue
        if not await _still_uncertain(sessions, w):
            continue  # settled while Temporal was asked: nothing lost
        await _restart(client, task_queue, options, w)
        check.restarted.append(w.key)
        await _alarm_once(sessions, AlarmCode.LEDGER_MONITOR_LOST, w,
                          f"write {w.key} without proof had no live monitor (workflow "
                          f"{status.name if status else 'not found'}); restarted")
    return check


def _uncertain() -> Any:
    """Writes without proof of their order's current revision, which that order monitors."""
    return (select(SisbajudWrite, SisbajudOrder)
            .join(SisbajudOrder, col(SisbajudOrder.order_id) == col(SisbajudWrite.order_id))
            .where(SisbajudWrite.state == "INDETERMINATE",
                   col(SisbajudOrder.revision) == col(SisbajudWrite.revision),
                   col(SisbajudOrder.state).in_(MONITORED_STATES)))


async def _watched(session: AsyncSession) -> list[Watched]:
    """What stage 3 needs of each write without proof, read in one go."""
    watched = []
    now = utcnow()
    for write, order in (await session.exec(_uncertain())).all():
        watched.append(Watched(
            key=write.idempotency_key, order_id=order.order_id, revision=order.revision,
            quiet_since=await _quiet_since(session, write),
            wait=_wait(write, order, await _beats(session, write), now)))
    return watched


async def _still_uncertain(sessions: async_sessionmaker[AsyncSession], w: Watched) -> bool:
    async with sessions() as session:
        return (await session.exec(_uncertain().where(
            SisbajudWrite.idempotency_key == w.key))).first() is not None


async def settle_resolved(session: AsyncSession) -> int:
    """Writes left without proof by a person's resolution that predates the write taking its
    effect (recorded before it did): each takes that resolution's effect now."""
    rows = (await session.exec(
        select(SisbajudWrite, SisbajudHumanDecision)
        .join(SisbajudHumanDecision,
              (col(SisbajudHumanDecision.order_id) == col(SisbajudWrite.order_id))
              & (col(SisbajudHumanDecision.revision) == col(SisbajudWrite.revision)))
        .where(SisbajudWrite.state == "INDETERMINATE",
               col(SisbajudHumanDecision.resolved_at).is_not(None),
               col(SisbajudHumanDecision.resolution).is_not(None)))).all()
    settled = 0
    for write, decision in rows:
        result = decision.resolution or {}
        if result.get("effect") not in {e.value for e in Effect} - {Effect.INDETERMINATE}:
            continue
        amount = result.get("executedAmount")
        settled += await resolve_write(
            session, write.order_id, write.revision, Effect(result["effect"]),
            Decimal(amount) if amount is not None else None, result.get("transactionId"),
            decision.resolved_by or "unknown")
    return settled


async def _status(client: Client, order_id: str) -> WorkflowExecutionStatus | None:
    try:
        described = await client.get_workflow_handle(order_workflow_id(order_id)).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return None
        raise
    return described.status


async def _quiet_since(session: AsyncSession, write: SisbajudWrite) -> datetime:
    """The last heartbeat queued for the write's revision, or its last attempt if later."""
    last_beat = (await session.exec(
        select(func.max(SisbajudOutbox.created_at))
        .where(SisbajudOutbox.order_id == write.order_id,
               SisbajudOutbox.revision == write.revision))).one()
    attempted = as_utc(write.updated_at)
    return max(attempted, as_utc(last_beat)) if last_beat else attempted


def _quiet_limit(options: OrderOptions) -> timedelta:
    """No beat (nor write attempt) for this long: STUCK_AFTER_BEATS periods plus the slack."""
    return timedelta(seconds=options.heartbeat_every_seconds * STUCK_AFTER_BEATS) + STUCK_SLACK


async def _beats(session: AsyncSession, write: SisbajudWrite) -> int:
    """Heartbeats queued so far (`<order>:<rev>:<n>`, n >= 2), so the restart numbers on."""
    keys = (await session.exec(select(SisbajudOutbox.idempotency_key).where(
        SisbajudOutbox.order_id == write.order_id,
        SisbajudOutbox.revision == write.revision))).all()
    seqs = [int(k.rsplit(":", 1)[-1]) for k in keys if k.rsplit(":", 1)[-1].isdigit()]
    return max((s - 1 for s in seqs), default=0)


def _wait(write: SisbajudWrite, order: SisbajudOrder, beats: int, now: datetime) -> Wait:
    """The MONITOR wait the lost run was in, rebuilt from the store."""
    requested = Decimal(order.requested_amount or write.total)
    rebuilt = Order(order_id=order.order_id, revision=order.revision,
                    operation=Operation(order.operation), institution_id=write.institution_id,
                    document=order.document or "", amount=requested,
                    parent_order_id=order.parent_order_id,
                    deadline=as_utc(order.deadline) if order.deadline else None)
    # The block's open amount at plan time is not stored; the requested amount is what a
    # first block plans against (FULL when the proof covers it).
    plan = Plan(kind=PlanKind.WRITE, legs=[Leg.model_validate(leg) for leg in write.legs],
                total=Decimal(write.total), open_amount=requested,
                block_alias=write.block_alias)
    return Wait(kind=WaitKind.MONITOR, order=rebuilt, plan=plan,
                write_kind=WriteKind(write.kind), sent_at=as_utc(write.created_at),
                state=OrderState(order.state), next_beat=now, beats=beats)


async def _restart(client: Client, task_queue: str, options: OrderOptions, w: Watched
                   ) -> None:
    wait = w.wait.model_copy(update={"next_beat": utcnow()})
    carry = Carry(seen=[w.revision], executed=[w.revision],
                  last_state=wait.state, pending=[], wait=wait)
    await start_workflow(
        client, ORDER_WORKFLOW,
        RunOrderInput(order_id=w.order_id, options=options,
                      carry=carry.model_dump(mode="json")),
        search_attributes=search_attributes.sisbajud_order(w.order_id),
        memo=search_attributes.summary_memo(
            f"Court order {w.order_id}: monitoring of write {w.key} restarted by the tick"),
        id=order_workflow_id(w.order_id), task_queue=task_queue,
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE)
    log.warning("Restarted the monitor of write %s", w.key)


async def _alarm_once(sessions: async_sessionmaker[AsyncSession], code: AlarmCode,
                      w: Watched, message: str) -> None:
    """One open (unacknowledged) alarm per order and code, not one per tick; committed."""
    async with sessions() as session:
        open_alarm = (await session.exec(select(SisbajudAlarm.id).where(
            SisbajudAlarm.code == code.value, SisbajudAlarm.order_id == w.order_id,
            col(SisbajudAlarm.acknowledged_at).is_(None)))).first()
        if open_alarm is None:
            await raise_alarm(session, code.value, f"Order {w.order_id} r{w.revision}: "
                              f"{message}", order_id=w.order_id, revision=w.revision)
            await session.commit()
