"""A person's resolution of held money is taken only as the ledger bears it out."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from workflows.sisbajud.state import OrderRun

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.contracts.errors import SisbajudApiErrorCode
    from activities.sisbajud.contracts.ledger import ResolutionLegsInput
    from activities.sisbajud.contracts.orders import Effect, ResolveDecisionInput
    from activities.sisbajud.resolution_legs import ResolutionActivities

# Runs recorded before a resolution's transaction was read took the resolution as given.
RESOLUTION_LEGS_PATCH = "sisbajud-resolution-legs"
# A person waits on the answer: a few quick tries while Midaz is unavailable, then a refusal
# they can send again.
LEGS_TIMEOUT = timedelta(seconds=20)
LEGS_DEADLINE = timedelta(seconds=45)
LEGS_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3)


def says_moved(request: ResolveDecisionInput) -> bool:
    """A resolution saying money moved, by a transaction: the ledger is asked what it moved."""
    return request.effect in (Effect.FULL, Effect.PARTIAL) and bool(request.transaction_id)


def unproven(message: str) -> ApplicationError:
    """The update's refusal: the decision stays open and the person may send it again."""
    return ApplicationError(message, type=SisbajudApiErrorCode.TRANSACTION_UNPROVEN,
                            non_retryable=True)


async def with_moved_legs(run: OrderRun, request: ResolveDecisionInput
                          ) -> ResolveDecisionInput:
    """`request` with the legs its transaction moved, as Midaz shows them (unchanged when no
    write of the revision waits for an effect); raises `unproven` when Midaz can't show it."""
    try:
        found = await workflow.execute_activity_method(
            ResolutionActivities.resolution_legs,
            ResolutionLegsInput(order_id=run.order_id, revision=request.revision,
                                effect=request.effect, executed_amount=request.executed_amount,
                                transaction_id=request.transaction_id),
            start_to_close_timeout=LEGS_TIMEOUT, schedule_to_close_timeout=LEGS_DEADLINE,
            heartbeat_timeout=run.beat_timeout(), retry_policy=LEGS_RETRY)
    except ActivityError as exc:
        raise unproven(f"transaction {request.transaction_id} could not be read from the "
                       f"ledger ({exc.cause}); send the resolution again later") from exc
    if found.problem is not None:
        raise unproven(found.problem)
    if found.legs is None:
        return request
    return request.model_copy(update={"moved_legs": found.legs})
