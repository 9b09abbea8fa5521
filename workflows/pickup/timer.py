"""`EntityTimerWorkflow`: one durable timer per READY episode, arrival signal or authorization."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.pickup.contracts.board import TimerInput, TimerResult
    from activities.pickup.contracts.names import ENTITY_TIMER_WORKFLOW, FIRE_TIMER_ACTIVITY

# One short CAS transaction, run as a local activity: no activity task round trip through the
# server, which halves the work per fired timer when a dismissal peak fires thousands at once.
# Idempotent, so retried until the store answers.
FIRE_TIMEOUT = timedelta(minutes=2)
FIRE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1),
                         maximum_interval=timedelta(minutes=1))


@workflow.defn(name=ENTITY_TIMER_WORKFLOW)
class EntityTimerWorkflow:
    """Sleeps until the deadline, then applies the expiry if nobody moved the entity first."""

    @workflow.run
    async def run(self, timer: TimerInput) -> TimerResult:
        delay = (timer.deadline - workflow.now()).total_seconds()
        if delay > 0:
            await workflow.sleep(delay)
        return await workflow.execute_local_activity(
            FIRE_TIMER_ACTIVITY, timer, start_to_close_timeout=FIRE_TIMEOUT,
            retry_policy=FIRE_RETRY, result_type=TimerResult)
