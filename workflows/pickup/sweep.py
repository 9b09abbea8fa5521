"""`SweepWorkflow`: what each sweep schedule starts — one reconciler activity."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.pickup.contracts.board import RunSweepInput, SweepResult
    from activities.pickup.contracts.names import SWEEP_WORKFLOW, sweep_activity

# Sweeps page through the store in batches and heartbeat after each one.
SWEEP_TIMEOUT = timedelta(minutes=30)
SWEEP_HEARTBEAT = timedelta(minutes=2)
# Idempotent, and the next scheduled run catches up anyway: a few tries are enough.
SWEEP_RETRY = RetryPolicy(initial_interval=timedelta(seconds=2), maximum_attempts=3)


@workflow.defn(name=SWEEP_WORKFLOW)
class SweepWorkflow:
    """Runs `sweep_activity(sweep)` with the schedule's action time as `now`."""

    @workflow.run
    async def run(self, request: RunSweepInput) -> SweepResult:
        if request.now is None:
            request = request.model_copy(update={"now": workflow.now()})
        return await workflow.execute_activity(
            sweep_activity(request.sweep), request, start_to_close_timeout=SWEEP_TIMEOUT,
            heartbeat_timeout=SWEEP_HEARTBEAT, retry_policy=SWEEP_RETRY,
            result_type=SweepResult)
