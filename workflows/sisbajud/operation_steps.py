"""The three operations as workflow steps: plan, (block account), write, decide the result."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

from workflows.sisbajud.monitor import FINAL_RESULT_SEQ, await_deferred, monitor
from workflows.sisbajud.progress import send_progress
from workflows.sisbajud.refusals import ReadFailure, read_failed, read_failure
from workflows.sisbajud.settle import settle
from workflows.sisbajud.state import OrderRun
from workflows.sisbajud.waits import roll

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.contracts.ledger import (
        EnsureBlockAccountInput,
        Plan,
        PlanInput,
        PlanKind,
        ReconcileResult,
        WriteInput,
        WriteKind,
        WriteOutcome,
        WriteOutcomeKind,
    )
    from activities.sisbajud.contracts.orders import (
        AlarmCode,
        Effect,
        ExecutionState,
        HumanReason,
        Order,
        OrderState,
        ProgressStep,
        ReasonCode,
        ResultPayload,
        SettleInput,
        result_idempotency_key,
        write_idempotency_key,
    )
    from activities.sisbajud.plans import PlanActivities
    from activities.sisbajud.writes import WriteActivities
    from workflows.sisbajud.carry import Wait, WaitKind

# Reads of the CRM and the ledger: retried while Midaz is unavailable, not when it refuses.
PLAN_TIMEOUT = timedelta(minutes=2)
PLAN_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1),
                         maximum_interval=timedelta(minutes=1))
ACCOUNT_TIMEOUT = timedelta(seconds=60)
ACCOUNT_RETRY = RetryPolicy(maximum_interval=timedelta(seconds=30), maximum_attempts=10)
# A write is resent with the same key, so retrying it (a dead worker, a lost answer) is safe.
WRITE_TIMEOUT = timedelta(minutes=2)
WRITE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1),
                          maximum_interval=timedelta(seconds=30), maximum_attempts=8)
# Balances that moved between plan and write (no effect): plan again this many times.
REPLANS = 3


async def _plan(run: OrderRun, method: Any, order: Order) -> Plan | ReadFailure:
    try:
        return await workflow.execute_activity_method(
            method, PlanInput(order=order), start_to_close_timeout=PLAN_TIMEOUT,
            heartbeat_timeout=run.beat_timeout(), retry_policy=PLAN_RETRY)
    except ActivityError as exc:
        workflow.logger.warning("Planning %s failed: %s", order.order_id, exc.cause)
        return read_failure(exc)


async def block(run: OrderRun, order: Order, resume: Wait | None = None
                ) -> SettleInput | None:
    """BLOQUEIO; `resume`: a deferred write a previous run handed over."""
    outcome: WriteOutcome | None = None
    for attempt in range(resume.attempt if resume else 0, REPLANS):
        write: Wait | None
        if resume is not None and resume.plan is not None:
            plan, write = resume.plan, resume
            resume = None
        else:
            planned, write = await _plan(run, PlanActivities.plan_block, order), None
            if isinstance(planned, ReadFailure):
                return read_failed(run, order, planned)
            plan = planned
            if plan.kind == PlanKind.RESOLVE:
                return _resolved(order, plan, Decimal(0))
            failed = await _ensure_block_account(run, order, plan)
            if failed is not None:
                return failed
        outcome = await _write(run, order, plan, WriteKind.BLOCK, attempt, write)
        if outcome is None or outcome.kind != WriteOutcomeKind.REJECTED:
            return await conclude(run, order, plan, WriteKind.BLOCK, outcome, attempt)
        if not outcome.retry_with_new_plan:
            break
    return _unsettled(order, outcome)


async def unblock(run: OrderRun, order: Order, resume: Wait | None = None
                  ) -> SettleInput | None:
    """DESBLOQUEIO; `resume`: a wait for the parent or a deferred write a previous run
    handed over."""
    if resume is not None and resume.waits_until is not None:
        waits_until = resume.waits_until
    else:
        waits_until = order.deadline or workflow.now() + timedelta(
            seconds=run.options.parent_wait_max_seconds)
    waiting = resume is not None and resume.kind == WaitKind.PARENT
    outcome: WriteOutcome | None = None
    for attempt in range(resume.attempt if resume else 0, REPLANS):
        write = resume if resume is not None and resume.kind == WaitKind.DEFERRED else None
        plan: Plan | ReadFailure | None
        if resume is not None:
            plan = resume.plan
            resume = None
        else:
            plan = await _plan(run, PlanActivities.plan_release, order)
        while (write is None and isinstance(plan, Plan)
               and plan.kind == PlanKind.WAIT_PARENT):
            left = (waits_until - workflow.now()).total_seconds()
            if left <= 0:
                return _human(order, HumanReason.PARENT_UNKNOWN_AT_DEADLINE, plan.detail)
            if not waiting:
                waiting = True
                await settle(run, SettleInput(order_id=order.order_id,
                                              revision=order.revision,
                                              state=OrderState.WAITING_PARENT,
                                              detail=plan.detail))
                await send_progress(order, ProgressStep.AWAITING_PARENT)
            await roll(run, Wait(kind=WaitKind.PARENT, order=order, plan=plan,
                                 attempt=attempt, waits_until=waits_until))
            await workflow.sleep(min(run.options.parent_poll_seconds, left))
            plan = await _plan(run, PlanActivities.plan_release, order)
        if isinstance(plan, ReadFailure):
            return read_failed(run, order, plan)
        if plan is None:
            return read_failed(run, order, ReadFailure("no plan was carried over"))
        if plan.kind == PlanKind.HUMAN:
            return _human(order, plan.human_reason, plan.detail)
        if plan.kind == PlanKind.RESOLVE:
            return _resolved(order, plan, Decimal(0))
        outcome = await _write(run, order, plan, WriteKind.UNBLOCK, attempt, write)
        if outcome is None or outcome.kind != WriteOutcomeKind.REJECTED:
            return await conclude(run, order, plan, WriteKind.UNBLOCK, outcome, attempt)
        if not outcome.retry_with_new_plan:
            break
    return _unsettled(order, outcome)


async def conclude(run: OrderRun, order: Order, plan: Plan, kind: WriteKind,
                   outcome: WriteOutcome | None, attempt: int = 0,
                   resume: Wait | None = None) -> SettleInput | None:
    """Applied -> result; deferred to the deadline -> a person; uncertain -> monitoring
    (`resume`: monitoring a previous run handed over)."""
    if outcome is None:
        return None
    if outcome.kind == WriteOutcomeKind.DEFERRED:
        return _human(order, HumanReason.WRITE_DEFERRED_AT_DEADLINE,
                      f"the write is still deferred: {outcome.detail}")
    if outcome.kind == WriteOutcomeKind.INDETERMINATE:
        watched = await monitor(run, order, plan, outcome, kind, attempt, resume)
        if not isinstance(watched, ReconcileResult):
            return watched
        outcome = WriteOutcome(kind=WriteOutcomeKind.APPLIED,
                               transaction_id=watched.transaction_id,
                               amount=watched.amount,
                               overdraft_touched=watched.overdraft_touched)
        return _applied(order, plan, kind, outcome, close_decisions=True)
    return _applied(order, plan, kind, outcome)


async def info(run: OrderRun, order: Order) -> SettleInput:
    """An information request: read, then answer (or ask a person)."""
    plan = await _plan(run, PlanActivities.plan_info, order)
    if isinstance(plan, ReadFailure):
        return read_failed(run, order, plan)
    if plan.kind == PlanKind.HUMAN:
        return _human(order, plan.human_reason, plan.detail)
    return _resolved(order, plan, None)


async def _ensure_block_account(run: OrderRun, order: Order, plan: Plan
                                ) -> SettleInput | None:
    """None once the block account exists; else where the order ends (a refused read of it:
    an alarm and a person; a refused create: parked)."""
    try:
        await workflow.execute_activity_method(
            WriteActivities.ensure_block_account,
            EnsureBlockAccountInput(institution_id=order.institution_id,
                                    alias=plan.block_alias or ""),
            start_to_close_timeout=ACCOUNT_TIMEOUT, heartbeat_timeout=run.beat_timeout(),
            retry_policy=ACCOUNT_RETRY)
    except ActivityError as exc:
        workflow.logger.warning("Block account for %s failed: %s", order.order_id, exc.cause)
        failure = read_failure(exc)
        if failure.refused:
            return read_failed(run, order, failure)
        return _parked(order, AlarmCode.LEDGER_WRITE_REJECTED,
                       f"block account {plan.block_alias} could not be found or made")
    return None


async def _write(run: OrderRun, order: Order, plan: Plan, kind: WriteKind, attempt: int = 0,
                 resume: Wait | None = None) -> WriteOutcome | None:
    """Send the write; a deferred one is sent again (same key, same body) until it goes
    out, the deadline margin arrives, or a newer revision takes over (None); `resume` is
    a deferral a previous run handed over."""
    request = WriteInput(
        order=order, kind=kind,
        idempotency_key=write_idempotency_key(order.order_id, order.revision),
        block_alias=plan.block_alias or "", legs=plan.legs, total=plan.total,
        parent_order_id=order.parent_order_id if kind == WriteKind.UNBLOCK else None)
    if resume is not None and resume.outcome is not None:
        outcome = resume.outcome
    else:
        if attempt == 0:
            await send_progress(order, ProgressStep.EXECUTING)
        run.nudged = False  # a redelivery from now on asks for another try
        outcome = await _send(run, request)
        if outcome.kind != WriteOutcomeKind.DEFERRED:
            return outcome
        await settle(run, SettleInput(
            order_id=order.order_id, revision=order.revision, state=OrderState.DEFERRED,
            alarm=AlarmCode.LEDGER_WRITE_DEFERRED,
            detail=f"write {request.idempotency_key} deferred: {outcome.code} "
                   f"{outcome.detail}"))
        await send_progress(order, ProgressStep.AWAITING_DEFERRAL)
    decide_at = run.decide_at(order)
    while outcome.kind == WriteOutcomeKind.DEFERRED:
        await roll(run, Wait(kind=WaitKind.DEFERRED, order=order, plan=plan,
                             write_kind=kind, attempt=attempt, outcome=outcome))
        if decide_at is not None and workflow.now() >= decide_at:
            return outcome
        if not await await_deferred(run, order, decide_at):
            return None
        if decide_at is not None and workflow.now() >= decide_at:
            return outcome
        run.nudged = False
        outcome = await _send(run, request)
    return outcome


async def _send(run: OrderRun, request: WriteInput) -> WriteOutcome:
    try:
        return await workflow.execute_activity_method(
            WriteActivities.write_ledger, request, start_to_close_timeout=WRITE_TIMEOUT,
            heartbeat_timeout=timedelta(
                seconds=run.options.write_heartbeat_timeout_seconds),
            retry_policy=WRITE_RETRY)
    except ActivityError as exc:
        return WriteOutcome(kind=WriteOutcomeKind.INDETERMINATE,
                            detail=f"no answer after retries: {exc.cause}")


def _applied(order: Order, plan: Plan, kind: WriteKind, outcome: WriteOutcome,
             close_decisions: bool = False) -> SettleInput:
    amount = outcome.amount or Decimal(0)
    if kind == WriteKind.BLOCK:
        full = amount >= plan.open_amount
        reason = ReasonCode.BLOCKED_TOTAL if full else ReasonCode.BLOCKED_PARTIAL
    else:
        full = amount >= order.amount
        reason = ReasonCode.UNBLOCKED_TOTAL if full else ReasonCode.UNBLOCKED_PARTIAL
    plan = plan.model_copy(update={"effect": Effect.FULL if full else Effect.PARTIAL,
                                   "reason_code": reason})
    settle = _resolved(order, plan, amount, outcome)
    return settle.model_copy(update={"close_decisions": close_decisions})


def _resolved(order: Order, plan: Plan, executed: Decimal | None,
              outcome: WriteOutcome | None = None) -> SettleInput:
    assert plan.effect is not None
    tx = outcome.transaction_id if outcome else None
    result = ResultPayload(
        order_id=order.order_id, order_revision=order.revision, operation=order.operation,
        execution_state=ExecutionState.RESOLVED, effect=plan.effect,
        reason_code=plan.reason_code, requested_amount=order.amount, executed_amount=executed,
        blockable_total=plan.blockable_total, blockable_salary_total=plan.blockable_salary_total,
        transaction_id=tx, block_account_alias=plan.block_alias if outcome else None)
    overdraft = outcome is not None and outcome.overdraft_touched
    return SettleInput(
        order_id=order.order_id, revision=order.revision, state=OrderState.RESOLVED,
        effect=plan.effect, reason_code=plan.reason_code, executed_amount=executed,
        transaction_id=tx, result=result,
        result_key=result_idempotency_key(order.order_id, order.revision, FINAL_RESULT_SEQ),
        alarm=AlarmCode.LEDGER_OVERDRAFT_TOUCHED if overdraft else None,
        detail="the write used an overdraft balance" if overdraft else plan.detail)


def _human(order: Order, reason: HumanReason | None, detail: str) -> SettleInput:
    return SettleInput(order_id=order.order_id, revision=order.revision,
                       state=OrderState.HUMAN_DECISION, human_reason=reason, detail=detail)


def _parked(order: Order, alarm: AlarmCode, detail: str) -> SettleInput:
    return SettleInput(order_id=order.order_id, revision=order.revision,
                       state=OrderState.PARKED, alarm=alarm, detail=detail)


def _unsettled(order: Order, outcome: WriteOutcome | None) -> SettleInput:
    detail = f"Midaz refused the write: {outcome.http_status} {outcome.code}" if outcome else ""
    return _parked(order, AlarmCode.LEDGER_WRITE_REJECTED, detail)
