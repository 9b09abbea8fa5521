"""Tick stage 3's proof: each write without proof has a live monitor; a lost one restarts."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy import func
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.common import WorkflowIDReusePolicy
from temporalio.service import RPCError, RPCStatusCode

from activities.sisbajud.store import raise_alarm
from activities.sisbajud.write_effects import resolve_write
from shared.contracts import search_attributes
from shared.contracts.sisbajud import (
    AlarmCode,
    Effect,
    Operation,
    Order,
    OrderOptions,
    OrderState,
    RunOrderInput,
    order_workflow_id,
)
from shared.contracts.sisbajud_ledger import Leg, Plan, PlanKind, WriteKind
from shared.contracts.sisbajud_names import ORDER_WORKFLOW
from shared.db.models import as_utc, utcnow
from shared.db.sisbajud_models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudOrder,
    SisbajudOutbox,
    SisbajudWrite,
)
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


async def check_monitors(session: AsyncSession, client: Client, task_queue: str,
                         options: OrderOptions) -> MonitorCheck:
    """Every INDETERMINATE write of its order's current revision: its workflow must be running
    and beating; one that is gone is restarted into its monitoring (alarm), one that no
    longer beats is alarmed. Alarms are added to the caller's transaction."""
    check = MonitorCheck(settled=await settle_resolved(session))
    rows = (await session.exec(
        select(SisbajudWrite, SisbajudOrder)
        .join(SisbajudOrder, col(SisbajudOrder.order_id) == col(SisbajudWrite.order_id))
        .where(SisbajudWrite.state == "INDETERMINATE",
               col(SisbajudOrder.revision) == col(SisbajudWrite.revision),
               col(SisbajudOrder.state).in_(MONITORED_STATES)))).all()
    check.writes = len(rows)
    for write, order in rows:
        status = await _status(client, order.order_id)
        if status == WorkflowExecutionStatus.RUNNING:
            if await _stale(session, write, options):
                check.stuck.append(write.idempotency_key)
                await _alarm_once(session, AlarmCode.LEDGER_MONITOR_STUCK, order,
                                  f"write {write.idempotency_key} has no heartbeat for "
                                  f"{STUCK_AFTER_BEATS} periods; its workflow is running "
                                  "but not monitoring")
            else:
                check.live += 1
            continue
        await _restart(session, client, task_queue, options, write, order)
        check.restarted.append(write.idempotency_key)
        await _alarm_once(session, AlarmCode.LEDGER_MONITOR_LOST, order,
                          f"write {write.idempotency_key} without proof had no live monitor "
                          f"(workflow {status.name if status else 'not found'}); restarted")
    return check


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


async def _stale(session: AsyncSession, write: SisbajudWrite, options: OrderOptions) -> bool:
    """No beat (nor write attempt) for STUCK_AFTER_BEATS periods plus the slack."""
    last_beat = (await session.exec(
        select(func.max(SisbajudOutbox.created_at))
        .where(SisbajudOutbox.order_id == write.order_id,
               SisbajudOutbox.revision == write.revision))).one()
    last = max(as_utc(write.updated_at), as_utc(last_beat) if last_beat else as_utc(
        write.updated_at))
    quiet = timedelta(seconds=options.heartbeat_every_seconds * STUCK_AFTER_BEATS)
    return utcnow() - last > quiet + STUCK_SLACK


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


async def _restart(session: AsyncSession, client: Client, task_queue: str,
                   options: OrderOptions, write: SisbajudWrite, order: SisbajudOrder) -> None:
    wait = _wait(write, order, await _beats(session, write), utcnow())
    carry = Carry(seen=[order.revision], executed=[order.revision],
                  last_state=OrderState(order.state), pending=[], wait=wait)
    await start_workflow(
        client, ORDER_WORKFLOW,
        RunOrderInput(order_id=order.order_id, options=options,
                      carry=carry.model_dump(mode="json")),
        search_attributes=search_attributes.sisbajud_order(order.order_id),
        memo=search_attributes.summary_memo(
            f"Court order {order.order_id}: monitoring of write {write.idempotency_key} "
            "restarted by the tick"),
        id=order_workflow_id(order.order_id), task_queue=task_queue,
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE)
    log.warning("Restarted the monitor of write %s", write.idempotency_key)


async def _alarm_once(session: AsyncSession, code: AlarmCode, order: SisbajudOrder,
                      message: str) -> None:
    """One open (unacknowledged) alarm per order and code, not one per tick."""
    open_alarm = (await session.exec(select(SisbajudAlarm.id).where(
        SisbajudAlarm.code == code.value, SisbajudAlarm.order_id == order.order_id,
        col(SisbajudAlarm.acknowledged_at).is_(None)))).first()
    if open_alarm is None:
        await raise_alarm(session, code.value, f"Order {order.order_id} r{order.revision}: "
                          f"{message}", order_id=order.order_id, revision=order.revision)
