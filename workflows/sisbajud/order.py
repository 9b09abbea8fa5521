"""`SisbajudOrder`: one court order, its revisions, from fetch to a settled result."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

from workflows.sisbajud.monitor import await_human
from workflows.sisbajud.operation_steps import block, conclude, info, unblock
from workflows.sisbajud.progress import accepted_in_claim, send_progress
from workflows.sisbajud.resolution import RESOLUTION_LEGS_PATCH, says_moved, with_moved_legs
from workflows.sisbajud.settle import STORE_RETRY, STORE_TIMEOUT, bare, settle
from workflows.sisbajud.state import OrderRun
from workflows.visibility import publish

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.contracts.errors import SisbajudApiErrorCode
    from activities.sisbajud.contracts.ledger import WriteOutcome, WriteOutcomeKind
    from activities.sisbajud.contracts.names import (
        NOTICE_SIGNAL,
        ORDER_WORKFLOW,
        RESOLVE_UPDATE,
        STATE_QUERY,
    )
    from activities.sisbajud.contracts.orders import (
        AlarmCode,
        BeginRevisionInput,
        CheckOwnershipInput,
        Effect,
        FetchOrderInput,
        FetchStatus,
        HumanReason,
        NoticeSignal,
        Operation,
        Order,
        OrderRunResult,
        OrderState,
        Ownership,
        ProgressStep,
        ResolveDecisionInput,
        ResolveDecisionResult,
        RunOrderInput,
        SettleInput,
    )
    from activities.sisbajud.orders import OrderActivities
    from shared.contracts.search_attributes import EXECUTION_STATE, INSTITUTION_ID, ORDER_ID
    from workflows.sisbajud.carry import Carry, Wait, WaitKind

FETCH_TIMEOUT = timedelta(seconds=30)


@workflow.defn(name=ORDER_WORKFLOW)
class SisbajudOrderWorkflow:
    """Executes each new revision of one order once; a redelivered revision is a no-op."""

    @workflow.init
    def __init__(self, request: RunOrderInput) -> None:
        self._run = OrderRun(order_id=request.order_id, options=request.options)
        # Restored before any handler runs: a resolution sent during the switch lands in the
        # new run's first task, and its validator must see the open decision.
        self._carry = Carry.model_validate(request.carry) if request.carry else None
        if self._carry is not None:
            self._run.restore(self._carry)

    @workflow.run
    async def run(self, request: RunOrderInput) -> OrderRunResult:
        run = self._run
        run.run_start_events = workflow.info().get_current_history_length()
        if self._carry is not None:
            await self._resume(self._carry.wait)
        while True:
            if run.pending:
                # The fetch returns the latest revision anyway: older pending ones add nothing.
                notice = max(run.pending, key=lambda n: n.revision)
                run.pending.clear()
                await self._execute(notice)
                continue
            await workflow.wait_condition(workflow.all_handlers_finished)
            if not run.pending:
                return self.state()

    @workflow.signal(name=NOTICE_SIGNAL)
    def notice(self, signal: NoticeSignal) -> None:
        """An accepted notice for this order (a revision this run already saw only nudges a
        deferred write to try again)."""
        if signal.revision not in self._run.seen:
            self._run.seen.add(signal.revision)
            self._run.pending.append(signal)
        else:
            self._run.nudged = True

    @workflow.update(name=RESOLVE_UPDATE)
    async def resolve(self, request: ResolveDecisionInput) -> ResolveDecisionResult:
        """A person's resolution of the open decision: the final result goes out once. Held
        money said moved is first read from the ledger's transaction (refused when Midaz
        can't show it: the decision stays open)."""
        run = self._run
        if says_moved(request) and workflow.patched(RESOLUTION_LEGS_PATCH):
            run.resolving.add(request.revision)
            try:
                request = await with_moved_legs(run, request)
            finally:
                run.resolving.discard(request.revision)
            if run.open_decision != request.revision:
                raise ApplicationError(f"revision {request.revision} of {run.order_id} no "
                                       "longer waits for a person",
                                       type=SisbajudApiErrorCode.DECISION_NOT_OPEN,
                                       non_retryable=True)
        run.resolutions[request.revision] = request
        await workflow.wait_condition(lambda: request.revision in run.resolved)
        return run.resolved[request.revision]

    @resolve.validator
    def _validate_resolve(self, request: ResolveDecisionInput) -> None:
        run = self._run
        if (run.open_decision != request.revision or request.revision in run.resolutions
                or request.revision in run.resolving):
            raise ValueError(f"revision {request.revision} of {run.order_id} has no open "
                             "human decision")
        if request.effect == Effect.INDETERMINATE:
            raise ValueError("a resolution must say what the effect was")
        if not request.actor.strip() or not request.reason.strip():
            raise ValueError("a resolution needs an actor and a reason")

    @workflow.query(name=STATE_QUERY)
    def state(self) -> OrderRunResult:
        """Revisions executed by this run and the last state settled."""
        return OrderRunResult(order_id=self._run.order_id, executed=list(self._run.executed),
                              last_state=self._run.last_state)

    async def _execute(self, notice: NoticeSignal) -> None:
        run = self._run
        fetched = await workflow.execute_activity_method(
            OrderActivities.fetch_order, FetchOrderInput(order_id=run.order_id),
            start_to_close_timeout=FETCH_TIMEOUT, retry_policy=self._fetch_retry(),
            heartbeat_timeout=run.beat_timeout())
        if fetched.status == FetchStatus.WITHDRAWN:
            await settle(run, bare(run, notice.revision, OrderState.WITHDRAWN,
                                   f"the Mensageria answered {fetched.http_status}"))
            return
        if fetched.order is None:
            alarm = (AlarmCode.ORDER_INVALID if fetched.http_status == 200
                     else AlarmCode.ORDER_FETCH_REJECTED)
            await settle(run, bare(run, notice.revision, OrderState.PARKED, fetched.detail,
                                   alarm))
            return
        order = fetched.order
        if order.revision in run.executed:
            return
        accepted = accepted_in_claim(order)
        begun = await workflow.execute_local_activity_method(
            OrderActivities.begin_revision,
            BeginRevisionInput(order=order, run_id=workflow.info().run_id, accepted=accepted),
            start_to_close_timeout=STORE_TIMEOUT, retry_policy=STORE_RETRY)
        if not begun.started:
            return
        run.executed.append(order.revision)
        publish(ORDER_ID, INSTITUTION_ID.value_set(order.institution_id),
                EXECUTION_STATE.value_set(OrderState.EXECUTING),
                summary=f"{order.operation} of order {order.order_id} revision "
                        f"{order.revision} at institution {order.institution_id}")
        if accepted is None:
            await send_progress(order, ProgressStep.ACCEPTED)
        await self._finish(order, await self._decide(order))

    async def _finish(self, order: Order, decision: SettleInput | None) -> None:
        run = self._run
        if decision is not None:
            await settle(run, decision)
        if decision is not None and decision.state == OrderState.HUMAN_DECISION:
            await send_progress(order, ProgressStep.AWAITING_PERSON)
            final = await await_human(run, order)
            if final is not None:
                await settle(run, final)

    async def _resume(self, wait: Wait) -> None:
        """Take over the wait the previous run of this order handed over, where it was."""
        run, order = self._run, wait.order
        if wait.kind == WaitKind.HUMAN:
            final = await await_human(run, order)
            if final is not None:
                await settle(run, final)
            return
        if wait.kind == WaitKind.MONITOR:
            assert wait.plan is not None and wait.write_kind is not None
            decision = await conclude(
                run, order, wait.plan, wait.write_kind,
                WriteOutcome(kind=WriteOutcomeKind.INDETERMINATE), wait.attempt, wait)
        elif order.operation == Operation.BLOQUEIO:
            decision = await block(run, order, wait)
        else:
            decision = await unblock(run, order, wait)
        await self._finish(order, decision)

    async def _decide(self, order: Order) -> SettleInput | None:
        owner = await workflow.execute_local_activity_method(
            OrderActivities.check_ownership,
            CheckOwnershipInput(institution_id=order.institution_id),
            start_to_close_timeout=STORE_TIMEOUT, retry_policy=STORE_RETRY)
        run = self._run
        if owner.ownership == Ownership.FOREIGN:
            return bare(run, order.revision, OrderState.FOREIGN_OWNER,
                              f"institution {order.institution_id} belongs to {owner.owner}",
                              AlarmCode.INSTITUTION_FOREIGN_OWNER)
        if owner.ownership == Ownership.UNCONFIGURED:
            return SettleInput(order_id=order.order_id, revision=order.revision,
                               state=OrderState.HUMAN_DECISION,
                               human_reason=HumanReason.INSTITUTION_UNCONFIGURED,
                               detail=f"institution {order.institution_id} is not configured")
        if order.operation == Operation.BLOQUEIO:
            return await block(run, order)
        if order.operation == Operation.DESBLOQUEIO:
            return await unblock(run, order)
        return await info(run, order)

    def _fetch_retry(self) -> RetryPolicy:
        # 401, 429, 5xx and network errors: try again with backoff for as long as it takes.
        options = self._run.options
        return RetryPolicy(
            initial_interval=timedelta(seconds=options.fetch_retry_initial_seconds),
            maximum_interval=timedelta(seconds=options.fetch_retry_max_seconds))
