"""`SisbajudTick`: one execution cycle, four isolated stages in the seed's order."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.contracts.names import TICK_WORKFLOW, stage_task_queue
    from activities.sisbajud.contracts.orders import (
        StageName,
        StageResult,
        TickInput,
        TickResult,
    )
    from activities.sisbajud.tick import TickActivities

STAGE_TIMEOUT = timedelta(minutes=2)
# The stages beat: a worker lost mid-stage is seen in seconds, not at the 2-minute timeout.
STAGE_HEARTBEAT = timedelta(seconds=10)
# Runs recorded before the stages had their own queue keep scheduling them on the tick's.
STAGE_QUEUE_PATCH = "sisbajud-tick-stage-queue"
# A stage that keeps failing is left for the next cycle, which comes soon anyway.
STAGE_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=2)


@workflow.defn(name=TICK_WORKFLOW)
class SisbajudTickWorkflow:
    """Ingestion, orphan check, monitoring, drain; a failing stage never stops the others."""

    @workflow.run
    async def run(self, request: TickInput) -> TickResult:
        stages = [
            (StageName.INGEST, TickActivities.ingest),
            (StageName.ORPHANS, TickActivities.orphans),
            (StageName.MONITOR, TickActivities.monitor),
            (StageName.DRAIN, TickActivities.drain),
        ]
        # The stages poll a queue of their own, so the drain never waits behind the
        # activities of the orders it is there to report on.
        queue = (stage_task_queue(workflow.info().task_queue)
                 if workflow.patched(STAGE_QUEUE_PATCH) else None)
        return TickResult(stages=[await self._stage(name, method, request, queue)
                                  for name, method in stages])

    async def _stage(self, name: StageName, method: Any, request: TickInput,
                     queue: str | None) -> StageResult:
        try:
            return await workflow.execute_activity_method(
                method, request, task_queue=queue, start_to_close_timeout=STAGE_TIMEOUT,
                heartbeat_timeout=STAGE_HEARTBEAT, retry_policy=STAGE_RETRY)
        except ActivityError as exc:
            workflow.logger.warning("Tick stage %s failed: %s", name.value, exc.cause)
            return StageResult(stage=name, ok=False, detail=str(exc.cause))
