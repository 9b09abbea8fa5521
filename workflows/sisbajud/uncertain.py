"""Waiting without proof: heartbeats of an uncertain write, deferred writes, human decisions."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from datetime import datetime, timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.reconcile import ReconcileActivities
    from shared.contracts.sisbajud import (
        AlarmCode,
        Effect,
        ExecutionState,
        HumanDisposition,
        HumanReason,
        NoticeSignal,
        Order,
        OrderOptions,
        OrderState,
        ResolveDecisionInput,
        ResolveDecisionResult,
        ResultPayload,
        RunOrderInput,
        SettleInput,
        block_account_alias,
        result_idempotency_key,
        write_idempotency_key,
    )
    from shared.contracts.sisbajud_ledger import (
        Plan,
        ReconcileResult,
        ReconcileWriteInput,
        WriteKind,
        WriteOutcome,
    )
    from workflows.sisbajud.carry import CONTINUE_AS_NEW_PATCH, MIN_RUN_EVENTS, Wait, WaitKind

from workflows.sisbajud.progress import states_on

# A re-read that fails is tried again at the next beat; the beat goes out regardless.
RECONCILE_TIMEOUT = timedelta(minutes=1)
RECONCILE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3)
FINAL_RESULT_SEQ = 1


class UncertainSteps:
    """Mixin of the order workflow: the waits that end in proof, a person, or a newer revision."""

    _order_id: str
    _options: OrderOptions
    _pending: list[NoticeSignal]
    _open_decision: int | None
    _resolutions: dict[int, ResolveDecisionInput]
    _nudged: bool
    # History length when this run started, and whether its history predates continue-as-new.
    _run_start_events: int
    _roll_off: bool

    async def _settle(self, request: SettleInput) -> None:
        raise NotImplementedError

    def _next_run(self, wait: Wait) -> RunOrderInput:
        raise NotImplementedError

    def _roll_due(self) -> bool:
        """Whether this run's history is long enough to hand its wait to a new run."""
        info = workflow.info()
        length = info.get_current_history_length()
        if self._roll_off or length < self._run_start_events + MIN_RUN_EVENTS:
            return False
        return (info.is_continue_as_new_suggested()
                or length >= self._options.continue_as_new_after_events)

    async def _roll(self, wait: Wait) -> None:
        """Continue as new into `wait` when due; returns when not due, or when a resolution or
        a newer revision arrived that this run handles itself."""
        if not self._roll_due():
            return
        if not workflow.patched(CONTINUE_AS_NEW_PATCH):
            self._roll_off = True  # replaying a run from before: it keeps its history
            return
        # Handlers finish here: an update accepted now is answered by this run, not lost.
        await workflow.wait_condition(
            lambda: workflow.all_handlers_finished() or self._interrupted(wait.order))
        if self._interrupted(wait.order):
            return
        workflow.continue_as_new(self._next_run(wait))

    def _interrupted(self, order: Order) -> bool:
        return order.revision in self._resolutions or self._newer_pending(order)

    def _newer_pending(self, order: Order) -> bool:
        return any(n.revision > order.revision for n in self._pending)

    def _decide_at(self, order: Order) -> datetime | None:
        """When an order still without an answer goes to a person: deadline minus margin."""
        if order.deadline is None:
            return None
        return order.deadline - timedelta(seconds=self._options.deadline_margin_seconds)

    async def _wait(self, until: datetime | None, wake: Callable[[], bool]) -> None:
        """Sleep on a durable timer until `until` (forever if None) or until `wake()`."""
        seconds = None if until is None else (until - workflow.now()).total_seconds()
        if seconds is not None and seconds <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await workflow.wait_condition(wake, timeout=seconds)

    async def _await_human(self, order: Order) -> SettleInput | None:
        """Hold the revision until a person resolves it (None: a newer revision came)."""
        self._open_decision = order.revision
        wait = Wait(kind=WaitKind.HUMAN, order=order)
        while not self._interrupted(order):
            await self._roll(wait)
            # Only messages grow a waiting run's history; a flood of them still rolls it.
            await self._wait(None, lambda: self._interrupted(order) or self._roll_due())
        self._open_decision = None
        if order.revision not in self._resolutions:
            return None
        return self._human_final(order)

    def _human_final(self, order: Order) -> SettleInput:
        res = self._resolutions[order.revision]
        self._open_decision = None
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

    def _resolution_result(self, request: SettleInput) -> ResolveDecisionResult:
        return ResolveDecisionResult(order_id=request.order_id, revision=request.revision,
                                     result_key=request.result_key or "")

    async def _monitor(self, order: Order, plan: Plan, outcome: WriteOutcome, kind: WriteKind,
                       attempt: int = 0, resume: Wait | None = None
                       ) -> ReconcileResult | SettleInput | None:
        """Re-read and heartbeat until the ledger proves the write (ReconcileResult), a person
        resolves it (SettleInput) or a newer revision takes over (None); `resume` is the
        wait a previous run handed over."""
        opts = self._options
        key = write_idempotency_key(order.order_id, order.revision)
        every = timedelta(seconds=opts.heartbeat_every_seconds)
        if resume is None:
            sent_at = workflow.now()
            state = OrderState.INDETERMINATE
            await self._settle(SettleInput(
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
                self._open_decision = order.revision
        decide_at = self._decide_at(order)
        while True:
            # Beat numbers (and so result keys) go on from where the previous run left them.
            await self._roll(Wait(kind=WaitKind.MONITOR, order=order, plan=plan,
                                  write_kind=kind, attempt=attempt, sent_at=sent_at,
                                  state=state, next_beat=next_beat, beats=beats,
                                  unchanged=unchanged, last_evidence=last_evidence))
            until = next_beat
            if state != OrderState.HUMAN_DECISION and decide_at is not None:
                until = min(until, decide_at)
            await self._wait(until, lambda: order.revision in self._resolutions
                             or self._newer_pending(order))
            if order.revision in self._resolutions:
                return self._human_final(order)
            if self._newer_pending(order):
                self._open_decision = None
                return None
            seen = await self._reconcile(order, plan, key, sent_at)
            if order.revision in self._resolutions:
                # The person's resolution was accepted during the re-read: it is the answer.
                return self._human_final(order)
            if seen is not None and seen.found:
                self._open_decision = None
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
                await self._settle(_heartbeat(order, plan, state, beats, watching))
            if state == OrderState.HUMAN_DECISION:
                continue
            margin_hit = decide_at is not None and now >= decide_at
            if unchanged >= opts.human_decision_after_beats or margin_hit:
                state = OrderState.HUMAN_DECISION
                self._open_decision = order.revision
                why = ("the order's deadline minus the response margin arrived" if margin_hit
                       else f"{unchanged} heartbeats without a change in the ledger")
                await self._settle(SettleInput(
                    order_id=order.order_id, revision=order.revision, state=state,
                    effect=Effect.INDETERMINATE, human_reason=HumanReason.WRITE_INDETERMINATE,
                    human_disposition=HumanDisposition.HELD_MONEY_MOVED,
                    detail=f"write {key} without proof: {why}"))

    async def _reconcile(self, order: Order, plan: Plan, key: str, since: datetime
                         ) -> ReconcileResult | None:
        try:
            return await workflow.execute_activity_method(
                ReconcileActivities.reconcile_write,
                ReconcileWriteInput(institution_id=order.institution_id, idempotency_key=key,
                                    block_alias=plan.block_alias
                                    or block_account_alias(order.order_id),
                                    since=since),
                start_to_close_timeout=RECONCILE_TIMEOUT, retry_policy=RECONCILE_RETRY)
        except ActivityError as exc:
            workflow.logger.warning("Re-reading %s failed: %s", key, exc.cause)
            return None

    async def _await_deferred(self, order: Order, decide_at: datetime | None) -> bool:
        """Wait for the next try of a deferred write: False once a newer revision came."""
        until = workflow.now() + timedelta(seconds=self._options.heartbeat_every_seconds)
        if decide_at is not None:
            until = min(until, decide_at)
        # A redelivered notice of this revision is the seed's "later delivery": try now (the
        # flag is cleared just before each send, so one arriving during a send still counts).
        await self._wait(until, lambda: self._nudged or self._newer_pending(order))
        return not self._newer_pending(order)


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
