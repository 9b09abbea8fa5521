"""Progress results: what the Mensageria hears while a revision runs, before its final result."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.contracts.orders import (
        Effect,
        ExecutionState,
        Order,
        ProgressStep,
        QueueResultInput,
        ResultPayload,
        progress_idempotency_key,
    )
    from activities.sisbajud.orders import OrderActivities
    from workflows.sisbajud.carry import ACCEPTED_IN_CLAIM_PATCH, STATES_PATCH

# A local activity like the other store steps: the store is ours, keep trying until it answers.
QUEUE_TIMEOUT = timedelta(seconds=30)
QUEUE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1),
                          maximum_interval=timedelta(seconds=30))
# Which `executionState` each step reports (the README's table).
STEP_STATE = {
    ProgressStep.ACCEPTED: ExecutionState.ACCEPTED,
    ProgressStep.EXECUTING: ExecutionState.EXECUTING,
    ProgressStep.AWAITING_PARENT: ExecutionState.AWAITING_RECONCILIATION,
    ProgressStep.AWAITING_DEFERRAL: ExecutionState.AWAITING_RECONCILIATION,
    ProgressStep.AWAITING_PERSON: ExecutionState.AWAITING_RECONCILIATION,
}


def states_on() -> bool:
    """Whether this run sends progress states (a history from before them replays without)."""
    return workflow.patched(STATES_PATCH)


def accepted_in_claim(order: Order) -> QueueResultInput | None:
    """The ACCEPTED result for the claim to queue in its own transaction (one store step
    instead of two), or None where the history sends it as a step of its own (the patch
    is checked first, so a history from before it never meets the states patch earlier)."""
    if not workflow.patched(ACCEPTED_IN_CLAIM_PATCH) or not states_on():
        return None
    return progress(order, ProgressStep.ACCEPTED)


def progress(order: Order, step: ProgressStep) -> QueueResultInput:
    """The step's result under `<orderId>:<revision>:<step>`."""
    result = ResultPayload(order_id=order.order_id, order_revision=order.revision,
                           operation=order.operation, execution_state=STEP_STATE[step],
                           effect=Effect.INDETERMINATE, requested_amount=order.amount)
    return QueueResultInput(result=result, result_key=progress_idempotency_key(
        order.order_id, order.revision, step))


async def send_progress(order: Order, step: ProgressStep) -> None:
    """Queue the step's result once, under `<orderId>:<revision>:<step>`."""
    if not states_on():
        return
    await workflow.execute_local_activity_method(
        OrderActivities.queue_result, progress(order, step),
        start_to_close_timeout=QUEUE_TIMEOUT, retry_policy=QUEUE_RETRY)
