"""Waiting without proof: heartbeats of an uncertain write, deferred writes, human decisions."""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

from workflows.sisbajud.progress import states_on
from workflows.sisbajud.refusals import (
    READ_REFUSED_PATCH,
    ReadFailure,
    read_failure,
    refused_detail,
)
from workflows.sisbajud.settle import settle
from workflows.sisbajud.state import OrderRun
from workflows.sisbajud.waits import roll, roll_due, sleep_until

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.contracts.ledger import (
        Plan,
        ReconcileResult,
        ReconcileWriteInput,
        WriteKind,
        WriteOutcome,
    )
    from activities.sisbajud.contracts.orders import (
        AlarmCode,
        Effect,
        ExecutionState,
        HumanDisposition,
        HumanReason,
        Order,
        OrderState,
        ResultPayload,
        SettleInput,
        block_account_alias,
        result_idempotency_key,
        write_idempotency_key,
    )
    from activities.sisbajud.reconcile import ReconcileActivities
    from workflows.sisbajud.carry import Wait, WaitKind

# A re-read that fails is tried again at the next beat; the beat goes out regardless.
RECONCILE_TIMEOUT = timedelta(minutes=1)
RECONCILE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3)
FINAL_RESULT_SEQ = 1
# Runs recorded before it closed the person's decision on a later ledger proof; now the
# proof is recorded on the decision, the beats go on and the people resolve it.
PROOF_KEEPS_DECISION_PATCH = "sisbajud-proof-keeps-decision"


async def await_human(run: OrderRun, order: Order) -> SettleInput | None:
    """Hold the revision until a person resolves it (None: a newer revision came)."""
    run.open_decision = order.revision
    wait = Wait(kind=WaitKind.HUMAN, order=order)
    while not run.interrupted(order):
        await roll(run, wait)
        # Only messages grow a waiting run's history; a flood of them still rolls it.
        await sleep_until(None, lambda: run.interrupted(order) or roll_due(run))
    run.open_decision = None
    if order.revision not in run.resolutions:
        return None
    return human_final(run, order)


def human_final(run: OrderRun, order: Order) -> SettleInput:
    """The final result a person's resolution of this revision settles."""
    res = run.resolutions[order.revision]
    run.open_decision = None
    result = ResultPayload(
        order_id=order.order_id, order_revision=order.revision, operation=order.operation,
        execution_state=ExecutionState.RESOLVED, effect=res.effect,
        reason_code=res.reason_code, requested_amount=order.amount,
        executed_amount=res.executed_amount, transaction_id=res.transaction_id)
    return SettleInput(
        order_id=order.order_id, revision=order.revision, state=OrderState.RESOLVED,
        effect=res.effect, reason_code=res.reason_code, executed_amount=res.executed_amount,
        transaction_id=res.transaction_id, result=result,
        result_key=result_idempotency_key(order.order_id, order.revision, FINAL_RESULT_SEQ),
        resolution=res, close_decisions=True,
        detail=f"resolved by {res.actor}: {res.reason}")


async def monitor(run: OrderRun, order: Order, plan: Plan, outcome: WriteOutcome,
                  kind: WriteKind, attempt: int = 0, resume: Wait | None = None
                  ) -> ReconcileResult | SettleInput | None:
    """Re-read and heartbeat until the ledger proves the write (ReconcileResult), a person
    resolves it (SettleInput) or a newer revision takes over (None); `resume` is the
    wait a previous run handed over."""
    opts = run.options
    key = write_idempotency_key(order.order_id, order.revision)
    every = timedelta(seconds=opts.heartbeat_every_seconds)
    if resume is None:
        sent_at = workflow.now()
        state = OrderState.INDETERMINATE
        await settle(run, SettleInput(
            order_id=order.order_id, revision=order.revision, state=state,
            effect=Effect.INDETERMINATE, alarm=AlarmCode.LEDGER_WRITE_INDETERMINATE,
            detail=outcome.detail or f"Midaz answered {outcome.http_status} {outcome.code}"))
        next_beat = sent_at + every
        beats = unchanged = 0
        last_evidence: str | None = None
    else:
        assert resume.sent_at is not None and resume.next_beat is not None
        sent_at, state, next_beat = resume.sent_at, resume.state, resume.next_beat
        beats, unchanged, last_evidence = resume.beats, resume.unchanged, resume.last_evidence
        if state == OrderState.HUMAN_DECISION:
            run.open_decision = order.revision
    decide_at = run.decide_at(order)
    while True:
        # Beat numbers (and so result keys) go on from where the previous run left them.
        await roll(run, Wait(kind=WaitKind.MONITOR, order=order, plan=plan,
                             write_kind=kind, attempt=attempt, sent_at=sent_at,
                             state=state, next_beat=next_beat, beats=beats,
                             unchanged=unchanged, last_evidence=last_evidence))
        until = next_beat
        if state != OrderState.HUMAN_DECISION and decide_at is not None:
            until = min(until, decide_at)
        await sleep_until(until, lambda: order.revision in run.resolutions
                         or run.newer_pending(order))
        if order.revision in run.resolutions:
            return human_final(run, order)
        if run.newer_pending(order):
            run.open_decision = None
            return None
        read = await _reconcile(run, order, plan, key, sent_at)
        refused = read if isinstance(read, ReadFailure) and read.refused else None
        seen = read if isinstance(read, ReconcileResult) else None
        if order.revision in run.resolutions:
            # The person's resolution was accepted during the re-read: it is the answer.
            return human_final(run, order)
        if seen is not None and seen.found and not (
                seen.for_decision and workflow.patched(PROOF_KEEPS_DECISION_PATCH)):
            run.open_decision = None
            return seen
        now = workflow.now()
        if now >= next_beat:
            beats += 1
            evidence = seen.evidence if seen is not None else last_evidence
            same = last_evidence is None or evidence == last_evidence
            unchanged = unchanged + 1 if same else 1
            last_evidence = evidence
            next_beat += every
            # Beats while the executor still re-reads say MONITORING; once the money is
            # held for a person they say INDETERMINATE, as the seed asks.
            watching = state != OrderState.HUMAN_DECISION and states_on()
            await settle(run, _heartbeat(order, plan, state, beats, watching))
        if state == OrderState.HUMAN_DECISION:
            continue
        margin_hit = decide_at is not None and now >= decide_at
        # A refused re-read won't change at the next beat: the people decide now (the
        # seed's re-read before each beat goes on, never retried in between).
        refused_now = refused is not None and workflow.patched(READ_REFUSED_PATCH)
        if unchanged >= opts.human_decision_after_beats or margin_hit or refused_now:
            state = OrderState.HUMAN_DECISION
            run.open_decision = order.revision
            if refused is not None and refused_now:
                why = f"the re-read was refused: {refused_detail(run, order, refused)}"
            elif margin_hit:
                why = "the order's deadline minus the response margin arrived"
            else:
                why = f"{unchanged} heartbeats without a change in the ledger"
            await settle(run, SettleInput(
                order_id=order.order_id, revision=order.revision, state=state,
                effect=Effect.INDETERMINATE, human_reason=HumanReason.WRITE_INDETERMINATE,
                human_disposition=HumanDisposition.HELD_MONEY_MOVED,
                alarm=AlarmCode.LEDGER_READ_FAILED if refused_now else None,
                detail=f"write {key} without proof: {why}"))


async def _reconcile(run: OrderRun, order: Order, plan: Plan, key: str, since: datetime
                     ) -> ReconcileResult | ReadFailure:
    try:
        return await workflow.execute_activity_method(
            ReconcileActivities.reconcile_write,
            ReconcileWriteInput(institution_id=order.institution_id, idempotency_key=key,
                                block_alias=plan.block_alias
                                or block_account_alias(order.order_id),
                                since=since),
            start_to_close_timeout=RECONCILE_TIMEOUT,
            heartbeat_timeout=run.beat_timeout(),
            retry_policy=RECONCILE_RETRY)
    except ActivityError as exc:
        workflow.logger.warning("Re-reading %s failed: %s", key, exc.cause)
        return read_failure(exc)


async def await_deferred(run: OrderRun, order: Order, decide_at: datetime | None) -> bool:
    """Wait for the next try of a deferred write: False once a newer revision came."""
    until = workflow.now() + timedelta(seconds=run.options.heartbeat_every_seconds)
    if decide_at is not None:
        until = min(until, decide_at)
    # A redelivered notice of this revision is the seed's "later delivery": try now (the
    # flag is cleared just before each send, so one arriving during a send still counts).
    await sleep_until(until, lambda: run.nudged or run.newer_pending(order))
    return not run.newer_pending(order)


def _heartbeat(order: Order, plan: Plan, state: OrderState, beat: int,
               watching: bool) -> SettleInput:
    execution = ExecutionState.MONITORING if watching else ExecutionState.INDETERMINATE
    result = ResultPayload(
        order_id=order.order_id, order_revision=order.revision, operation=order.operation,
        execution_state=execution, effect=Effect.INDETERMINATE,
        requested_amount=order.amount, block_account_alias=plan.block_alias)
    return SettleInput(
        order_id=order.order_id, revision=order.revision, state=state,
        effect=Effect.INDETERMINATE, result=result,
        # The final result keeps seq 1; beat n is seq n + 1.
        result_key=result_idempotency_key(order.order_id, order.revision,
                                          FINAL_RESULT_SEQ + beat),
        detail=f"heartbeat {beat}: no proof of the write yet")
