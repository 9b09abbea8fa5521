"""`DrainWorkflow`: delivers one outbox (a controller's ledger, or notifications) until empty."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.pickup.contracts.board import (
        KICK_SIGNAL,
        DrainBatchInput,
        DrainInput,
        DrainResult,
    )
    from activities.pickup.contracts.names import DRAIN_WORKFLOW, drain_activity

ROUND_TIMEOUT = timedelta(minutes=5)
# Bounds history: after this many rounds the drain continues as new.
MAX_ROUNDS = 200
NOTIFICATION_BACKOFF_PATCH = "pickup-notification-backoff"
# A timer needs a positive duration; a notification already due waits this long.
MIN_WAIT_SECONDS = 0.01


@workflow.defn(name=DRAIN_WORKFLOW)
class DrainWorkflow:
    """Rounds of delivery; idles a while for a `kick`, then ends (the next kick restarts it)."""

    def __init__(self) -> None:
        self._kicked = False

    @workflow.run
    async def run(self, request: DrainInput) -> DrainResult:
        # An unreachable controller fails the round; Temporal retries it with backoff for as
        # long as it takes, so a pending revocation is never dropped.
        retry = RetryPolicy(
            initial_interval=timedelta(seconds=request.retry_initial_seconds),
            backoff_coefficient=2.0,
            maximum_interval=timedelta(seconds=request.retry_max_interval_seconds))
        batch = DrainBatchInput(outbox=request.outbox, key=request.key,
                                batch_size=request.batch_size)
        total = DrainResult()
        for _ in range(MAX_ROUNDS):
            self._kicked = False
            result = await workflow.execute_activity(
                drain_activity(request.outbox), batch, start_to_close_timeout=ROUND_TIMEOUT,
                retry_policy=retry, result_type=DrainResult)
            total = DrainResult(delivered=total.delivered + result.delivered,
                                failed=total.failed + result.failed, remaining=result.remaining)
            if result.remaining:
                continue
            # Notifications backing off: sleep until the next is due instead of ending.
            # (Older histories never carry `retry_in_seconds`, so never reach the patch.)
            backing_off = (result.retry_in_seconds is not None
                           and workflow.patched(NOTIFICATION_BACKOFF_PATCH))
            idle = (max(result.retry_in_seconds, MIN_WAIT_SECONDS) if backing_off
                    else request.idle_seconds)
            try:
                await workflow.wait_condition(lambda: self._kicked, timeout=idle)
            except TimeoutError:
                if backing_off:
                    continue
                break
        else:
            self._kicked = True
        await workflow.wait_condition(workflow.all_handlers_finished)
        if self._kicked:
            # More rounds than one history should hold, or a kick that raced the idle timeout.
            workflow.continue_as_new(request.model_copy(update={"rounds": request.rounds + 1}))
        return total

    @workflow.signal(name=KICK_SIGNAL)
    def kick(self) -> None:
        """New work was recorded."""
        self._kicked = True
