"""The day-cycle schedule on the dev server, the workflow it starts, its saved history."""

from __future__ import annotations

import contextlib
import json
from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.client import ScheduleOverlapPolicy, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.worker import Replayer, Worker

from activities.pickup.contracts.board import DAY_START_REASON, DayCycleResult, RunDayCycleInput
from activities.pickup.contracts.names import DAY_CYCLE_SCHEDULE, DAY_CYCLE_WORKFLOW
from activities.pickup.day_cycle import DayCycle
from activities.pickup.day_schedule import ensure_day_cycle_schedule
from activities.pickup.models import Student
from shared.db.models import utcnow
from shared.settings import PickupSettings
from workflows.pickup import WORKFLOWS


@pytest.fixture
async def schedule(temporal_env):
    client = temporal_env.client
    yield client
    with contextlib.suppress(Exception):  # not created when a test failed early
        await client.get_schedule_handle(DAY_CYCLE_SCHEDULE).delete()


async def test_one_schedule_every_minute_skips_overlaps_and_keeps_an_operators_pause(schedule):
    settings = PickupSettings()
    assert await ensure_day_cycle_schedule(schedule, settings) == DAY_CYCLE_SCHEDULE
    handle = schedule.get_schedule_handle(DAY_CYCLE_SCHEDULE)
    await handle.pause(note="ops")
    assert await ensure_day_cycle_schedule(schedule, settings) == DAY_CYCLE_SCHEDULE

    described = (await handle.describe()).schedule
    assert described.state.paused  # an operator's pause survives a worker restart
    assert described.policy.overlap == ScheduleOverlapPolicy.SKIP
    assert described.policy.catchup_window == timedelta(minutes=1)
    assert [i.every for i in described.spec.intervals] == [timedelta(minutes=1)]
    assert (described.action.workflow, described.action.task_queue) == (
        DAY_CYCLE_WORKFLOW, "pickup-v1")
    [arg] = await schedule.data_converter.decode(described.action.args, [RunDayCycleInput])
    assert arg.now is None and arg.batch_size == settings.sweep_batch_size
    assert await ensure_day_cycle_schedule(
        schedule, PickupSettings(schedules_enabled=False)) is None


async def test_the_workflow_resets_what_predates_the_school_day_of_its_own_time(
        temporal_env, store, task_queue):
    school = await store.seed.school()
    yesterday = await store.seed.ready_student(school, at=utcnow() - timedelta(days=1))
    async with Worker(temporal_env.client, task_queue=task_queue, workflows=WORKFLOWS,
                      activities=[DayCycle(store.sessions, store.kicker).start_days]):
        result = await temporal_env.client.execute_workflow(
            DAY_CYCLE_WORKFLOW, RunDayCycleInput(), result_type=DayCycleResult,
            id=f"{DAY_CYCLE_SCHEDULE}:{task_queue}", task_queue=task_queue)

    assert (result.students, result.revoked) == (1, 1)
    reset = await store.seed.get(Student, yesterday.id)
    assert (reset.state, reset.state_reason) == ("AT_SCHOOL", DAY_START_REASON)


async def test_the_saved_day_cycle_history_replays():
    path = Path(__file__).with_name("histories") / "day_cycle" / "pickup_day_cycle.json"
    history = WorkflowHistory.from_json(path.stem, json.loads(path.read_text()))
    await Replayer(workflows=WORKFLOWS, data_converter=pydantic_data_converter
                   ).replay_workflow(history)
