"""Recording where a revision stands: the `settle` store step and the state it leaves."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from workflows.sisbajud.state import OrderRun
from workflows.visibility import publish

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.contracts.orders import (
        AlarmCode,
        OrderState,
        ResolveDecisionResult,
        SettleInput,
    )
    from activities.sisbajud.orders import OrderActivities
    from shared.contracts.search_attributes import EXECUTION_STATE, ORDER_ID

# Store steps run as local activities: short, idempotent, no task round trip through the
# server (the order's truth is this workflow; the rows are its read model).
STORE_TIMEOUT = timedelta(seconds=30)
# The store is ours: keep trying until it answers rather than lose a step.
STORE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1),
                          maximum_interval=timedelta(seconds=30))


async def settle(run: OrderRun, request: SettleInput) -> None:
    """Record the revision's state (and its result, alarm, decision) in the store."""
    await workflow.execute_local_activity_method(
        OrderActivities.settle, request, start_to_close_timeout=STORE_TIMEOUT,
        retry_policy=STORE_RETRY)
    run.last_state = request.state
    publish(ORDER_ID, EXECUTION_STATE.value_set(request.state))
    if request.resolution is not None:
        run.resolved[request.revision] = ResolveDecisionResult(
            order_id=request.order_id, revision=request.revision,
            result_key=request.result_key or "")


def bare(run: OrderRun, revision: int, state: OrderState, detail: str,
         alarm: AlarmCode | None = None) -> SettleInput:
    """A settlement without a result: withdrawn, parked, foreign owner."""
    return SettleInput(order_id=run.order_id, revision=revision, state=state,
                       alarm=alarm, detail=detail)
