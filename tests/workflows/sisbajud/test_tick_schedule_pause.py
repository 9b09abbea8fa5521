"""A worker restart updates the tick schedule in place without undoing an operator's pause."""

from __future__ import annotations

from datetime import timedelta

from activities.sisbajud.setup import ensure_tick_schedule
from tests.support.sisbajud import sisbajud_settings


async def test_a_restart_keeps_an_operators_pause_and_applies_the_new_spec(
        settings, task_queue, temporal_env):
    client = temporal_env.client
    first = sisbajud_settings(settings, task_queue, tick_every_seconds=30.0)
    schedule_id = await ensure_tick_schedule(client, first)
    handle = client.get_schedule_handle(schedule_id)
    try:
        await handle.pause(note="ops: Mensageria maintenance")
        restarted = sisbajud_settings(settings, task_queue, tick_every_seconds=5.0)
        assert await ensure_tick_schedule(client, restarted) == schedule_id
        described = await handle.describe()
        assert described.schedule.state.paused
        assert described.schedule.state.note == "ops: Mensageria maintenance"
        assert described.schedule.spec.intervals[0].every == timedelta(seconds=5)
    finally:
        await handle.delete()
