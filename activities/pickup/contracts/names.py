"""Names of the pickup domain in Temporal: task queue, workflow types, activities, signals.

Their values are in running workflows, schedules and saved histories: never change one.
"""

from __future__ import annotations

TASK_QUEUE = "pickup-v1"

# Workflow types.
DRAIN_WORKFLOW = "pickup-drain"
SWEEP_WORKFLOW = "pickup-sweep"
ENTITY_TIMER_WORKFLOW = "pickup-entity-timer"
DAY_CYCLE_WORKFLOW = "pickup-day-cycle"

# Activities (the sweep and drain ones are one per sweep / outbox: see the builders below).
FIRE_TIMER_ACTIVITY = "pickup-fire-timer"
DAY_CYCLE_ACTIVITY = "pickup-day-cycle-start"

# Schedules (the sweeps' ids are built by `activities.pickup.contracts.board.sweep_schedule_id`).
DAY_CYCLE_SCHEDULE = "pickup-day-cycle"

# Signals.
KICK_SIGNAL = "kick"


def sweep_activity(sweep: str) -> str:
    """`pickup-sweep-<sweep>`: the activity a sweep workflow runs."""
    return f"pickup-sweep-{sweep}"


def drain_activity(outbox: str) -> str:
    """`pickup-drain-<outbox>`: one delivery round of a drain workflow."""
    return f"pickup-drain-{outbox}"
