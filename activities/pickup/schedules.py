"""The seven sweep schedules, created (or brought up to date) idempotently at worker start."""

from __future__ import annotations

import logging
from datetime import timedelta

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleCalendarSpec,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleRange,
    ScheduleSpec,
    ScheduleState,
)

from activities.pickup.contracts.board import RunSweepInput, Sweep, sweep_schedule_id
from activities.pickup.contracts.names import SWEEP_WORKFLOW, TASK_QUEUE
from shared.logs import props
from shared.schedules import ensure_schedule
from shared.settings import PickupSettings

log = logging.getLogger("esteira.pickup")
# A run that wedges must not hold the schedule forever under SKIP.
SWEEP_EXECUTION_TIMEOUT = timedelta(minutes=30)
MAX_CATCHUP = timedelta(hours=6)


def every(minutes: float) -> tuple[ScheduleSpec, timedelta]:
    interval = timedelta(minutes=minutes)
    # Missed actions older than one interval are pointless: the next run covers them.
    catchup = max(timedelta(seconds=10), min(interval, MAX_CATCHUP))
    return ScheduleSpec(intervals=[ScheduleIntervalSpec(every=interval)]), catchup


def _midnight(time_zone: str) -> tuple[ScheduleSpec, timedelta]:
    calendar = ScheduleCalendarSpec(hour=[ScheduleRange(0)], minute=[ScheduleRange(0)],
                                    second=[ScheduleRange(0)], comment="00:00 local")
    return ScheduleSpec(calendars=[calendar], time_zone_name=time_zone), MAX_CATCHUP


def sweep_schedules(settings: PickupSettings) -> dict[Sweep, Schedule]:
    """Each sweep's schedule: cadence from settings, overlap SKIP, bounded catch-up."""
    specs = {
        Sweep.EXPIRE_AUTHORIZATIONS: every(settings.authorization_sweep_minutes),
        Sweep.EXPIRE_EARLY_RELEASES: every(settings.early_release_sweep_minutes),
        Sweep.DELETE_EXPIRED_LINKS: _midnight(settings.link_sweep_time_zone),
        Sweep.CLOSE_ARRIVALS: every(settings.arrival_sweep_minutes),
        Sweep.REVERT_READY: every(settings.ready_sweep_minutes),
        Sweep.PRUNE_TOKENS: every(settings.token_sweep_hours * 60),
        Sweep.QUEUE_SNAPSHOT: every(settings.queue_snapshot_minutes),
    }
    return {
        sweep: Schedule(
            action=ScheduleActionStartWorkflow(
                SWEEP_WORKFLOW, RunSweepInput(sweep=sweep, batch_size=settings.sweep_batch_size),
                id=sweep_schedule_id(sweep), task_queue=TASK_QUEUE,
                execution_timeout=SWEEP_EXECUTION_TIMEOUT),
            spec=spec,
            policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=catchup),
            state=ScheduleState(note=f"pickup sweep {sweep}"),
        )
        for sweep, (spec, catchup) in specs.items()
    }


async def ensure_schedules(client: Client, settings: PickupSettings) -> list[str]:
    """Create each schedule, or update an existing one to this spec (keeping pause state)."""
    if not settings.schedules_enabled:
        return []
    ids = []
    for sweep, schedule in sweep_schedules(settings).items():
        await ensure_schedule(client, sweep_schedule_id(sweep), schedule)
        ids.append(sweep_schedule_id(sweep))
    log.info("Pickup sweep schedules in place: %s", ", ".join(ids), extra=props(Schedules=ids))
    return ids
