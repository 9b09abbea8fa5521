"""`SisbajudOrder`: one court order, its revisions, from fetch to a settled result."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from workflows.sisbajud.operations import OperationSteps
from workflows.sisbajud.progress import send_progress
from workflows.visibility import publish

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.orders import OrderActivities
    from shared.contracts.search_attributes import EXECUTION_STATE, INSTITUTION_ID, ORDER_ID
    from shared.contracts.sisbajud import (
        ORDER_WORKFLOW,
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
    from shared.contracts.sisbajud_ledger import WriteOutcome, WriteOutcomeKind
    from workflows.sisbajud.carry import Carry, Wait, WaitKind

FETCH_TIMEOUT = timedelta(seconds=30)
# Store steps run as local activities: short, idempotent, no task round trip through the
# server (the order's truth is this workflow; the rows are its read model).
STORE_TIMEOUT = timedelta(seconds=30)
# The store is ours: keep trying until it answers rather than lose a step.
STORE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1),
                          maximum_interval=timedelta(seconds=30))


@workflow.defn(name=ORDER_WORKFLOW)
class SisbajudOrderWorkflow(OperationSteps):
    """Executes each new revision of one order once; a redelivered revision is a no-op."""

    @workflow.init
    def __init__(self, request: RunOrderInput) -> None:
        self._order_id, self._options = request.order_id, request.options
        self._pending: list[NoticeSignal] = []
        self._seen: set[int] = set()
        self._executed: list[int] = []
        self._last_state: OrderState | None = None
        # The revision whose human decision accepts a resolution now, and the answers.
        self._open_decision: int | None = None
        self._resolutions: dict[int, ResolveDecisionInput] = {}
        self._resolved: dict[int, ResolveDecisionResult] = {}
        self._nudged = False
        self._run_start_events = 0
        self._roll_off = False
        # Restored before any handler runs: a resolution sent during the switch lands in the
        # new run's first task, and its validator must see the open decision.
        self._carry = Carry.model_validate(request.carry) if request.carry else None
        if self._carry is not None:
            self._restore(self._carry)

    @workflow.run
    async def run(self, request: RunOrderInput) -> OrderRunResult:
        self._run_start_events = workflow.info().get_current_history_length()
        if self._carry is not None:
            await self._resume(self._carry.wait)
        while True:
            if self._pending:
                # The fetch returns the latest revision anyway: older pending ones add nothing.
                notice = max(self._pending, key=lambda n: n.revision)
                self._pending.clear()
                await self._execute(notice)
                continue
            await workflow.wait_condition(workflow.all_handlers_finished)
            if not self._pending:
                return self.state()

    @workflow.signal(name="notice")
    def notice(self, signal: NoticeSignal) -> None:
        """An accepted notice for this order (a revision this run already saw only nudges a
        deferred write to try again)."""
        if signal.revision not in self._seen:
            self._seen.add(signal.revision)
            self._pending.append(signal)
        else:
            self._nudged = True

    @workflow.update(name="resolve")
    async def resolve(self, request: ResolveDecisionInput) -> ResolveDecisionResult:
        """A person's resolution of the open decision: the final result goes out once."""
        self._resolutions[request.revision] = request
        await workflow.wait_condition(lambda: request.revision in self._resolved)
        return self._resolved[request.revision]

    @resolve.validator
    def _validate_resolve(self, request: ResolveDecisionInput) -> None:
        if self._open_decision != request.revision or request.revision in self._resolutions:
            raise ValueError(f"revision {request.revision} of {self._order_id} has no open "
                             "human decision")
        if request.effect == Effect.INDETERMINATE:
            raise ValueError("a resolution must say what the effect was")
        if not request.actor.strip() or not request.reason.strip():
            raise ValueError("a resolution needs an actor and a reason")

    @workflow.query(name="state")
    def state(self) -> OrderRunResult:
        """Revisions executed by this run and the last state settled."""
        return OrderRunResult(order_id=self._order_id, executed=list(self._executed),
                              last_state=self._last_state)

    async def _execute(self, notice: NoticeSignal) -> None:
        fetched = await workflow.execute_activity_method(
            OrderActivities.fetch_order, FetchOrderInput(order_id=self._order_id),
            start_to_close_timeout=FETCH_TIMEOUT, retry_policy=self._fetch_retry())
        if fetched.status == FetchStatus.WITHDRAWN:
            await self._settle(self._bare(notice.revision, OrderState.WITHDRAWN,
                                          f"the Mensageria answered {fetched.http_status}"))
            return
        if fetched.order is None:
            alarm = (AlarmCode.ORDER_INVALID if fetched.http_status == 200
                     else AlarmCode.ORDER_FETCH_REJECTED)
            await self._settle(self._bare(notice.revision, OrderState.PARKED, fetched.detail,
                                          alarm))
            return
        order = fetched.order
        if order.revision in self._executed:
            return
        begun = await workflow.execute_local_activity_method(
            OrderActivities.begin_revision,
            BeginRevisionInput(order=order, run_id=workflow.info().run_id),
            start_to_close_timeout=STORE_TIMEOUT, retry_policy=STORE_RETRY)
        if not begun.started:
            return
        self._executed.append(order.revision)
        publish(ORDER_ID, INSTITUTION_ID.value_set(order.institution_id),
                EXECUTION_STATE.value_set(OrderState.EXECUTING),
                summary=f"{order.operation} of order {order.order_id} revision "
                        f"{order.revision} at institution {order.institution_id}")
        await send_progress(order, ProgressStep.ACCEPTED)
        await self._finish(order, await self._decide(order))

    async def _finish(self, order: Order, decision: SettleInput | None) -> None:
        if decision is not None:
            await self._settle(decision)
        if decision is not None and decision.state == OrderState.HUMAN_DECISION:
            await send_progress(order, ProgressStep.AWAITING_PERSON)
            final = await self._await_human(order)
            if final is not None:
                await self._settle(final)

    def _restore(self, carry: Carry) -> None:
        """The previous run's state, before any handler of this run sees a message."""
        self._seen, self._executed = set(carry.seen), list(carry.executed)
        self._last_state, self._pending = carry.last_state, list(carry.pending)
        self._nudged = carry.nudged
        wait = carry.wait
        if wait.kind == WaitKind.HUMAN or (wait.kind == WaitKind.MONITOR
                                           and wait.state == OrderState.HUMAN_DECISION):
            self._open_decision = wait.order.revision

    async def _resume(self, wait: Wait) -> None:
        """Take over the wait the previous run of this order handed over, where it was."""
        order = wait.order
        if wait.kind == WaitKind.HUMAN:
            final = await self._await_human(order)
            if final is not None:
                await self._settle(final)
            return
        if wait.kind == WaitKind.MONITOR:
            assert wait.plan is not None and wait.write_kind is not None
            decision = await self._conclude(
                order, wait.plan, wait.write_kind,
                WriteOutcome(kind=WriteOutcomeKind.INDETERMINATE), wait.attempt, wait)
        elif order.operation == Operation.BLOQUEIO:
            decision = await self._block(order, wait)
        else:
            decision = await self._unblock(order, wait)
        await self._finish(order, decision)

    def _next_run(self, wait: Wait) -> RunOrderInput:
        carry = Carry(seen=sorted(self._seen), executed=self._executed,
                      last_state=self._last_state, pending=self._pending, nudged=self._nudged,
                      wait=wait)
        return RunOrderInput(order_id=self._order_id, options=self._options,
                             carry=carry.model_dump(mode="json"))

    async def _decide(self, order: Order) -> SettleInput | None:
        owner = await workflow.execute_local_activity_method(
            OrderActivities.check_ownership,
            CheckOwnershipInput(institution_id=order.institution_id),
            start_to_close_timeout=STORE_TIMEOUT, retry_policy=STORE_RETRY)
        if owner.ownership == Ownership.FOREIGN:
            return self._bare(order.revision, OrderState.FOREIGN_OWNER,
                              f"institution {order.institution_id} belongs to {owner.owner}",
                              AlarmCode.INSTITUTION_FOREIGN_OWNER)
        if owner.ownership == Ownership.UNCONFIGURED:
            return SettleInput(order_id=order.order_id, revision=order.revision,
                               state=OrderState.HUMAN_DECISION,
                               human_reason=HumanReason.INSTITUTION_UNCONFIGURED,
                               detail=f"institution {order.institution_id} is not configured")
        if order.operation == Operation.BLOQUEIO:
            return await self._block(order)
        if order.operation == Operation.DESBLOQUEIO:
            return await self._unblock(order)
        return await self._info(order)

    async def _settle(self, request: SettleInput) -> None:
        await workflow.execute_local_activity_method(
            OrderActivities.settle, request, start_to_close_timeout=STORE_TIMEOUT,
            retry_policy=STORE_RETRY)
        self._last_state = request.state
        publish(ORDER_ID, EXECUTION_STATE.value_set(request.state))
        if request.resolution is not None:
            self._resolved[request.revision] = self._resolution_result(request)

    def _bare(self, revision: int, state: OrderState, detail: str,
              alarm: AlarmCode | None = None) -> SettleInput:
        return SettleInput(order_id=self._order_id, revision=revision, state=state,
                           alarm=alarm, detail=detail)

    def _fetch_retry(self) -> RetryPolicy:
        # 401, 429, 5xx and network errors: try again with backoff for as long as it takes.
        return RetryPolicy(
            initial_interval=timedelta(seconds=self._options.fetch_retry_initial_seconds),
            maximum_interval=timedelta(seconds=self._options.fetch_retry_max_seconds))
