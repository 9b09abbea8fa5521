"""Creating a Temporal Schedule at start-up without undoing an operator's pause."""

from __future__ import annotations

import dataclasses

from temporalio.client import (
    Client,
    Schedule,
    ScheduleAlreadyRunningError,
    ScheduleUpdate,
    ScheduleUpdateInput,
)


async def ensure_schedule(client: Client, schedule_id: str, schedule: Schedule) -> None:
    """Create the schedule, or update an existing one to this spec keeping its pause state."""
    try:
        await client.create_schedule(schedule_id, schedule)
    except ScheduleAlreadyRunningError:
        # A restart brings the spec up to date but keeps an operator's pause (and its note).
        def keep_state(current: ScheduleUpdateInput) -> ScheduleUpdate:
            return ScheduleUpdate(schedule=dataclasses.replace(
                schedule, state=current.description.schedule.state))

        await client.get_schedule_handle(schedule_id).update(keep_state)
