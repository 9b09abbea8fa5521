"""`SisbajudOrder`: one court order, its revisions, from fetch to a settled result."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from workflows.sisbajud.operations import OperationSteps

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.orders import OrderActivities
    from shared.contracts.sisbajud import (
        ORDER_WORKFLOW,
        AlarmCode,
        BeginRevisionInput,
        CheckOwnershipInput,
        FetchOrderInput,
        FetchStatus,
        HumanReason,
        NoticeSignal,
        Operation,
        Order,
        OrderOptions,
        OrderRunResult,
        OrderState,
        Ownership,
        RunOrderInput,
        SettleInput,
    )

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

    def __init__(self) -> None:
        self._order_id = ""
        self._options = OrderOptions()
        self._pending: list[NoticeSignal] = []
        self._seen: set[int] = set()
        self._executed: list[int] = []
        self._last_state: OrderState | None = None

    @workflow.run
    async def run(self, request: RunOrderInput) -> OrderRunResult:
        self._order_id, self._options = request.order_id, request.options
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
        """An accepted notice for this order (a revision this run already saw is dropped)."""
        if signal.revision not in self._seen:
            self._seen.add(signal.revision)
            self._pending.append(signal)

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
        await self._settle(await self._decide(order))

    async def _decide(self, order: Order) -> SettleInput:
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

    def _bare(self, revision: int, state: OrderState, detail: str,
              alarm: AlarmCode | None = None) -> SettleInput:
        return SettleInput(order_id=self._order_id, revision=revision, state=state,
                           alarm=alarm, detail=detail)

    def _fetch_retry(self) -> RetryPolicy:
        # 401, 429, 5xx and network errors: try again with backoff for as long as it takes.
        return RetryPolicy(
            initial_interval=timedelta(seconds=self._options.fetch_retry_initial_seconds),
            maximum_interval=timedelta(seconds=self._options.fetch_retry_max_seconds))
