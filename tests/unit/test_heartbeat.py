"""The one heartbeat helper every domain's activities use."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import get_type_hints

import pytest
from temporalio.testing import ActivityEnvironment

from activities.sisbajud.orders import OrderActivities
from activities.sisbajud.plans import PlanActivities
from activities.sisbajud.reconcile import ReconcileActivities
from activities.sisbajud.tick import TickActivities
from activities.sisbajud.writes import WriteActivities
from shared.heartbeat import DEFAULT_EVERY_SECONDS, beat, beat_period, heartbeating, heartbeats


def _env(heartbeat_timeout: timedelta | None = None) -> tuple[ActivityEnvironment, list]:
    env = ActivityEnvironment()
    env.info = dataclasses.replace(env.info, heartbeat_timeout=heartbeat_timeout)
    beats: list = []
    env.on_heartbeat = lambda *details: beats.append(details)
    return env, beats


def test_a_beat_outside_an_activity_does_nothing():
    beat("progress")  # no activity context: no error, nothing sent


def test_a_beat_inside_an_activity_carries_its_details():
    env, beats = _env()
    env.run(beat, 7)
    assert beats == [(7,)]


@pytest.mark.parametrize(("timeout", "period"), [
    (timedelta(seconds=30), 10.0), (None, DEFAULT_EVERY_SECONDS)])
def test_the_period_is_a_third_of_the_heartbeat_timeout(timeout, period):
    env, _ = _env(timeout)
    assert env.run(beat_period) == period


async def test_heartbeating_beats_while_the_body_runs_and_stops_after():
    env, beats = _env()

    async def long_call() -> int:
        async with heartbeating(0.01):
            deadline = asyncio.get_running_loop().time() + 10
            while len(beats) < 3:  # poll for the beats, up to a deadline
                assert asyncio.get_running_loop().time() < deadline, "no heartbeat came"
                await asyncio.sleep(0.005)
        return len(beats)

    seen = await env.run(long_call)
    await asyncio.sleep(0.05)  # a stopped beat would have fired several times by now
    assert len(beats) == seen


async def test_heartbeating_outside_an_activity_just_runs_the_body():
    async with heartbeating(0.001):
        await asyncio.sleep(0)


async def test_a_heartbeats_activity_beats_a_third_of_its_timeout_while_it_runs():
    env, beats = _env(timedelta(seconds=0.06))

    @heartbeats
    async def slow(wanted: int) -> int:
        deadline = asyncio.get_running_loop().time() + 10
        while len(beats) < wanted:
            assert asyncio.get_running_loop().time() < deadline, "no heartbeat came"
            await asyncio.sleep(0.005)
        return wanted

    assert await env.run(slow, 3) == 3
    assert slow.__name__ == "slow" and get_type_hints(slow)["wanted"] is int


@pytest.mark.parametrize("method", [
    OrderActivities.fetch_order, PlanActivities.plan_block, PlanActivities.plan_release,
    PlanActivities.plan_info, WriteActivities.ensure_block_account,
    ReconcileActivities.reconcile_write, TickActivities.ingest, TickActivities.orphans,
    TickActivities.monitor, TickActivities.drain])
def test_the_long_sisbajud_activities_beat(method):
    # The workflow gives each a heartbeat timeout; only a beating body keeps it alive.
    assert method.__wrapped__.__qualname__.endswith(method.__name__)
    assert method.__code__ is heartbeats(method.__wrapped__).__code__
