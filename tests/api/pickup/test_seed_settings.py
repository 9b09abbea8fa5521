"""The two durations the seed names: `IONCLASS_READY_TIMEOUT_MINUTES` and the school's own
arrival timeout. Each test fails if its setting is ignored (the defaults are 60 and 15)."""

from __future__ import annotations

import contextlib
from datetime import timedelta

import pytest
from temporalio.service import RPCError

from activities.pickup.contracts.board import (
    RunSweepInput,
    Sweep,
    TimerInput,
    TimerKind,
    timer_workflow_id,
)
from activities.pickup.models import Arrival, LedgerEntry, Student
from activities.pickup.sweeps import PickupSweeps
from shared.db.models import as_utc, utcnow
from tests.support.pickup import RecordingKicker

READY_MINUTES = 7


@pytest.fixture
def ionclass_ready_timeout(monkeypatch):
    """The seed's environment variable, set before the app's settings are built."""
    monkeypatch.setenv("IONCLASS_READY_TIMEOUT_MINUTES", str(READY_MINUTES))


async def _timer(client, workflow_id: str) -> TimerInput:
    """The input a timer workflow was started with, read back from its history (then ended)."""
    handle = client.get_workflow_handle(workflow_id)
    history = await handle.fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    [timer] = await client.data_converter.decode(started.input.payloads, [TimerInput])
    await handle.terminate("test over")
    return timer


async def _clear(client, *workflow_ids: str) -> None:
    """End timers an earlier test left running under the same ids on the shared server."""
    for workflow_id in workflow_ids:
        with contextlib.suppress(RPCError):  # none running
            await client.get_workflow_handle(workflow_id).terminate("earlier test")


def _sweeps(api) -> PickupSweeps:
    return PickupSweeps(api.context.sessions, api.context.settings.pickup, RecordingKicker())


async def test_ionclass_ready_timeout_sets_the_timer_the_grant_and_the_sweep(
        ionclass_ready_timeout, pickup_api, temporal_env):
    api = pickup_api
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    sid = (await api.ok("POST", "/api/pickup/students", json={
        "schoolId": school["id"], "name": "Ana", "cardValue": 55}))["id"]
    await _clear(temporal_env.client, timer_workflow_id(TimerKind.READY, sid, 2))
    await api.ok("POST", f"/api/pickup/students/{sid}/arrival")
    ready = await api.ok("POST", f"/api/pickup/students/{sid}/ready", json={"version": 1})
    ready_at = as_utc((await api.seed.get(Student, sid)).state_since)

    timer = await _timer(temporal_env.client,
                         timer_workflow_id(TimerKind.READY, sid, ready["version"]))
    assert timer.deadline == ready_at + timedelta(minutes=READY_MINUTES)
    [grant] = await api.seed.all(LedgerEntry)
    # The device drops the credential 5 minutes after the READY timeout.
    assert grant.end_time == int((ready_at + timedelta(minutes=READY_MINUTES + 5)).timestamp())

    sweeps = _sweeps(api)
    early = await sweeps.revert_ready(RunSweepInput(
        sweep=Sweep.REVERT_READY, now=ready_at + timedelta(minutes=READY_MINUTES - 1)))
    assert early.changed == 0
    late = await sweeps.revert_ready(RunSweepInput(
        sweep=Sweep.REVERT_READY, now=ready_at + timedelta(minutes=READY_MINUTES + 1)))
    assert late.changed == 1  # with the default 60 minutes it would still be READY
    assert (await api.seed.get(Student, sid)).state == "AT_SCHOOL"


async def test_each_school_times_arrival_signals_out_by_its_own_setting(pickup_api,
                                                                         temporal_env):
    api = pickup_api
    quick = await api.ok("POST", "/api/pickup/schools",
                         json={"name": "Rápida", "arrivalTimeoutMinutes": 3})
    slow = await api.ok("POST", "/api/pickup/schools",
                        json={"name": "Lenta", "arrivalTimeoutMinutes": 40})
    assert (quick["arrivalTimeoutMinutes"], slow["arrivalTimeoutMinutes"]) == (3, 40)
    await _clear(temporal_env.client, *(timer_workflow_id(TimerKind.ARRIVAL, n) for n in (1, 2)))
    students = {}
    for school in (quick, slow):
        sid = (await api.ok("POST", "/api/pickup/students",
                            json={"schoolId": school["id"], "name": "Ana"}))["id"]
        await api.ok("POST", f"/api/pickup/students/{sid}/arrival")
        students[school["id"]] = sid
    arrivals = {a.school_id: a for a in await api.seed.all(Arrival)}
    for school, minutes in ((quick, 3), (slow, 40)):
        arrival = arrivals[school["id"]]
        deadline = as_utc(arrival.created_at) + timedelta(minutes=minutes)
        assert as_utc(arrival.expires_at) == deadline
        timer = await _timer(temporal_env.client,
                             timer_workflow_id(TimerKind.ARRIVAL, arrival.id))
        assert timer.deadline == deadline

    # Five minutes on: past the quick school's 3, inside the slow one's 40 (and the 15 default).
    result = await _sweeps(api).close_arrivals(RunSweepInput(
        sweep=Sweep.CLOSE_ARRIVALS, now=utcnow() + timedelta(minutes=5)))
    assert result.changed == 1
    assert (await api.seed.get(Student, students[quick["id"]])).state == "AT_SCHOOL"
    assert (await api.seed.get(Student, students[slow["id"]])).state == "AWAITING"
