"""The seven sweep schedules on the dev server, and the sweep workflow they start."""

from __future__ import annotations

import contextlib
from datetime import timedelta

import pytest
from temporalio.client import ScheduleOverlapPolicy
from temporalio.worker import Worker

from activities.pickup.contracts.board import (
    READY_TIMEOUT_REASON,
    RunSweepInput,
    Sweep,
    SweepResult,
    sweep_schedule_id,
)
from activities.pickup.contracts.names import DAY_CYCLE_SCHEDULE
from activities.pickup.models import Student
from activities.pickup.schedules import ensure_schedules
from services.worker.domains import DOMAINS
from shared.db.engine import create_engine, session_factory
from shared.db.models import utcnow
from shared.settings import PickupSettings, TemporalSettings
from shared.worker_shape import WorkerDeps
from tests.support.pickup import pickup_settings
from workflows.pickup import WORKFLOWS

CADENCE = {
    Sweep.EXPIRE_AUTHORIZATIONS: timedelta(hours=1),
    Sweep.EXPIRE_EARLY_RELEASES: timedelta(hours=1),
    Sweep.CLOSE_ARRIVALS: timedelta(minutes=1), Sweep.REVERT_READY: timedelta(minutes=5),
    Sweep.PRUNE_TOKENS: timedelta(days=1), Sweep.QUEUE_SNAPSHOT: timedelta(minutes=5),
}


@pytest.fixture
async def schedules(temporal_env):
    client = temporal_env.client
    yield client
    for schedule_id in [*map(sweep_schedule_id, Sweep), DAY_CYCLE_SCHEDULE]:
        with contextlib.suppress(Exception):  # not created when a test failed early
            await client.get_schedule_handle(schedule_id).delete()


async def test_seven_schedules_skip_overlaps_bound_catchup_and_run_midnight_in_sao_paulo(
        schedules):
    settings = PickupSettings()
    assert len(await ensure_schedules(schedules, settings)) == 7
    await schedules.get_schedule_handle(sweep_schedule_id(Sweep.REVERT_READY)).pause(note="ops")
    assert len(await ensure_schedules(schedules, settings)) == 7  # idempotent

    for sweep in Sweep:
        described = await schedules.get_schedule_handle(sweep_schedule_id(sweep)).describe()
        schedule = described.schedule
        assert schedule.policy.overlap == ScheduleOverlapPolicy.SKIP
        assert timedelta(seconds=10) <= schedule.policy.catchup_window <= timedelta(hours=6)
        assert schedule.action.workflow == "pickup-sweep"
        assert schedule.action.task_queue == "pickup-v1"
        [arg] = await schedules.data_converter.decode(schedule.action.args, [RunSweepInput])
        assert arg.sweep == sweep
        if sweep == Sweep.DELETE_EXPIRED_LINKS:
            assert schedule.spec.time_zone_name == "America/Sao_Paulo"
            [calendar] = schedule.spec.calendars
            assert [(r.start, r.end) for r in calendar.hour] == [(0, 0)]
            assert [(r.start, r.end) for r in calendar.minute] == [(0, 0)]
        else:
            assert [i.every for i in schedule.spec.intervals] == [CADENCE[sweep]]
    paused = await schedules.get_schedule_handle(sweep_schedule_id(Sweep.REVERT_READY)).describe()
    assert paused.schedule.state.paused  # an operator's pause survives a worker restart


async def test_sweep_workflow_runs_its_activity_with_the_workflow_time(
        temporal_env, store, task_queue):
    school = await store.seed.school()
    stuck = await store.seed.ready_student(school, at=utcnow() - timedelta(minutes=90))
    async with Worker(temporal_env.client, task_queue=task_queue, workflows=WORKFLOWS,
                      activities=store.sweeps.all()):
        result = await temporal_env.client.execute_workflow(
            "pickup-sweep", RunSweepInput(sweep=Sweep.REVERT_READY), result_type=SweepResult,
            id=f"{sweep_schedule_id(Sweep.REVERT_READY)}:{task_queue}", task_queue=task_queue)

    assert result.changed == 1
    reverted = await store.seed.get(Student, stuck.id)
    assert reverted.state_reason == READY_TIMEOUT_REASON


async def test_the_worker_builder_wires_the_domain_and_puts_the_schedules_in_place(
        schedules, tmp_path, database_url):
    target = schedules.service_client.config.target_host
    settings = pickup_settings(tmp_path, database_url, schedules_enabled=True)
    settings = settings.model_copy(update={"temporal": TemporalSettings(address=target)})
    engine = create_engine(settings.sqlalchemy_url)
    async with contextlib.AsyncExitStack() as resources:
        [worker] = await DOMAINS["pickup"](WorkerDeps(settings, session_factory(engine),
                                                      "test-worker", resources))
    await engine.dispose()

    assert worker.task_queue == "pickup-v1" and len(worker.workflows) == 4
    names = {getattr(fn, "__temporal_activity_definition").name for fn in worker.activities}
    assert {"pickup-fire-timer", "pickup-drain-ledger", "pickup-drain-notifications",
            "pickup-day-cycle-start"} <= names
    await schedules.get_schedule_handle(DAY_CYCLE_SCHEDULE).describe()
    assert {f"pickup-sweep-{sweep}" for sweep in Sweep} <= names
    for sweep in Sweep:
        await schedules.get_schedule_handle(sweep_schedule_id(sweep)).describe()
