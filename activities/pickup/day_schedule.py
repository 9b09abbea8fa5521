"""The day-cycle schedule, created (or brought up to date) idempotently at worker start.

One schedule serves every school: each run computes, per school, the start of its current day
in its own zone and resets what predates it. The interval bounds how late after a school's
day start the reset lands; the boundary itself is exact, so a student who already moved
today (an arrival at 07:01) is never reset.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleState,
)

from activities.pickup.contracts.board import RunDayCycleInput
from activities.pickup.contracts.names import DAY_CYCLE_SCHEDULE, DAY_CYCLE_WORKFLOW, TASK_QUEUE
from activities.pickup.schedules import every
from shared.schedules import ensure_schedule
from shared.settings import PickupSettings

log = logging.getLogger("esteira.pickup")
# A run that wedges must not hold the schedule forever under SKIP.
DAY_CYCLE_EXECUTION_TIMEOUT = timedelta(minutes=30)


def day_cycle_schedule(settings: PickupSettings) -> Schedule:
    """Every `day_cycle_minutes`, overlap SKIP; a missed run is covered by the next one."""
    spec, catchup = every(settings.day_cycle_minutes)
    return Schedule(
        action=ScheduleActionStartWorkflow(
            DAY_CYCLE_WORKFLOW, RunDayCycleInput(batch_size=settings.sweep_batch_size),
            id=DAY_CYCLE_SCHEDULE, task_queue=TASK_QUEUE,
            execution_timeout=DAY_CYCLE_EXECUTION_TIMEOUT),
        spec=spec,
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=catchup),
        state=ScheduleState(note="pickup school day: every school's day start"),
    )


async def ensure_day_cycle_schedule(client: Client, settings: PickupSettings) -> str | None:
    """Create the schedule, or update it to this spec keeping an operator's pause."""
    if not settings.schedules_enabled:
        return None
    await ensure_schedule(client, DAY_CYCLE_SCHEDULE, day_cycle_schedule(settings))
    log.info("Pickup day-cycle schedule in place: %s", DAY_CYCLE_SCHEDULE)
    return DAY_CYCLE_SCHEDULE
