"""`DayCycleWorkflow`: what the day-cycle schedule starts — one reconciler activity."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.pickup.contracts.board import DayCycleResult, RunDayCycleInput
    from activities.pickup.contracts.names import DAY_CYCLE_ACTIVITY, DAY_CYCLE_WORKFLOW

# The activity pages through each school's students in batches and heartbeats after each.
DAY_CYCLE_TIMEOUT = timedelta(minutes=30)
DAY_CYCLE_HEARTBEAT = timedelta(minutes=2)
# Idempotent, and the next scheduled run catches up anyway: a few tries are enough.
DAY_CYCLE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=2), maximum_attempts=3)


@workflow.defn(name=DAY_CYCLE_WORKFLOW)
class DayCycleWorkflow:
    """Runs the day-cycle activity with the schedule's action time as `now`."""

    @workflow.run
    async def run(self, request: RunDayCycleInput) -> DayCycleResult:
        if request.now is None:
            request = request.model_copy(update={"now": workflow.now()})
        return await workflow.execute_activity(
            DAY_CYCLE_ACTIVITY, request, start_to_close_timeout=DAY_CYCLE_TIMEOUT,
            heartbeat_timeout=DAY_CYCLE_HEARTBEAT, retry_policy=DAY_CYCLE_RETRY,
            result_type=DayCycleResult)
