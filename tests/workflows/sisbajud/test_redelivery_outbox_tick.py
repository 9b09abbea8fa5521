"""Redeliveries write nothing new; the outbox drains with stable keys; the tick's stages."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest
from temporalio import activity
from temporalio.client import ScheduleOverlapPolicy
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from activities.sisbajud.contracts.orders import (
    TICK_WORKFLOW,
    StageName,
    StageResult,
    TickInput,
    TickResult,
    tick_schedule_id,
)
from activities.sisbajud.models import SisbajudAlarm, SisbajudNotice, SisbajudOutbox
from activities.sisbajud.setup import ensure_tick_schedule, tick_input
from services.simulators.hub.sender import prepare_notice
from services.webhook_gateway.app import WEBHOOK_PATH
from tests.api.sisbajud.conftest import SECRET, world_gateway
from tests.support.sisbajud import new_order_id, stored
from tests.support.sisbajud_states import final_keys, states
from workflows.sisbajud.tick import SisbajudTickWorkflow, stage_task_queue

SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


async def _notify(world, order_id, revision=1, msg_id=None):
    async with world_gateway(world) as gateway:
        notice = prepare_notice(SECRET, order_id, revision, msg_id=msg_id)
        response = await gateway.post(WEBHOOK_PATH, content=notice.body, headers=notice.headers)
    assert response.status_code == 200
    return response.json()["status"]


async def _settled(world, order_id):
    for _ in range(100):
        rows = await stored(world, SisbajudOutbox, idempotency_key=f"{order_id}:1:1")
        if rows:
            return rows
        await asyncio.sleep(0.1)
    pytest.fail(f"no result queued for {order_id}")


async def _final_row(world, order_id) -> SisbajudOutbox:
    (row,) = await stored(world, SisbajudOutbox, idempotency_key=f"{order_id}:1:1")
    return row


async def test_notice_to_result_through_ticks_and_a_redelivery_writes_nothing_new(
        world, temporal_env):
    client = temporal_env.client
    order_id = new_order_id()
    await world.account("@d-1", "100")
    await world.order(order_id, amount="40")
    assert await _notify(world, order_id, msg_id="hub-1") == "accepted"
    assert await _notify(world, order_id, msg_id="hub-2") == "accepted"  # same revision
    async with world.worker(client):
        first = await world.tick(client)
        assert first.stages[0].done == 2
        await _settled(world, order_id)
        await world.tick(client)
        # The Hub redelivers the same revision later, under a new webhook-id.
        assert await _notify(world, order_id, msg_id="hub-3") == "accepted"
        again = await world.tick(client)
        assert again.stages[0].done == 1
        # And once more straight to the workflow, as if ingestion had missed the store row.
        rerun = await world.execute(client, order_id)
        await world.tick(client)
    assert rerun.executed == []
    assert len(await world.transactions()) == 1
    results = await world.results(order_id)
    # Redelivered three times, run again by hand: every state went out once, under one key.
    assert states(results) == [("accepted", "ACCEPTED"), ("executing", "EXECUTING"),
                               ("1", "RESOLVED")]
    assert sorted(a["idempotencyKey"] for a in results["attempts"]) == results["keys"]
    assert final_keys(results) == [f"{order_id}:1:1"]
    notices = sorted(n.state for n in await stored(world, SisbajudNotice, order_id=order_id))
    assert notices == ["DUPLICATE", "INGESTED", "INGESTED"]


async def test_mensageria_down_then_up_drains_the_same_result_with_the_same_key(
        world, temporal_env):
    client = temporal_env.client
    order_id = new_order_id()
    await world.account("@m-1", "100")
    await world.order(order_id, amount="10")
    # Down: the order's own sends and a tick's drain are all refused.
    await world.mensageria.post("/_sim/faults", json={"route": "results.post", "status": 503,
                                                      "count": 1000})
    async with world.worker(client):
        await world.execute(client, order_id)
        down = await world.tick(client)
        # The first state is refused; the later ones wait behind it, still queued.
        (first,) = await stored(world, SisbajudOutbox, idempotency_key=f"{order_id}:1:accepted")
        assert first.state == "PENDING" and first.last_status == 503
        assert (await _final_row(world, order_id)).state == "PENDING"
        await world.mensageria.delete("/_sim/faults")  # up again
        sent = 0
        for _ in range(100):  # the rows' backoff (50 ms at most here) runs out
            sent += (await world.tick(client)).stages[3].done
            if sent == 3:
                break
    assert not down.stages[3].done and sent == 3
    row = await _final_row(world, order_id)
    assert row.state == "SENT"
    results = await world.results(order_id)
    assert states(results) == [("accepted", "ACCEPTED"), ("executing", "EXECUTING"),
                               ("1", "RESOLVED")]
    for key in results["keys"]:
        outcomes = [a["outcome"] for a in results["attempts"] if a["idempotencyKey"] == key]
        assert outcomes[-1] == "accepted" and outcomes.count("accepted") == 1
        assert set(outcomes[:-1]) <= {"refused-503"}
    assert final_keys(results) == [f"{order_id}:1:1"]


@SQLITE_ONLY
async def test_a_result_received_but_answered_500_is_resent_under_its_key(world, temporal_env):
    client = temporal_env.client
    order_id = new_order_id()
    await world.account("@a-1", "100")
    await world.order(order_id, amount="10")
    await world.mensageria.post("/_sim/faults", json={"route": "results.post",
                                                      "kind": "accept_then_fail"})
    async with world.worker(client):
        await world.execute(client, order_id)
        await world.tick(client)
        await asyncio.sleep(0.05)
        await world.tick(client)
    results = await world.results(order_id)
    # The first result sent (ACCEPTED) was stored but answered 500: resent under its key.
    deliveries = {r["idempotencyKey"]: r["deliveries"] for r in results["results"]}
    assert deliveries == {f"{order_id}:1:accepted": 2, f"{order_id}:1:executing": 1,
                          f"{order_id}:1:1": 1}
    assert not any(a["conflicting"] for a in results["attempts"])


@SQLITE_ONLY
async def test_a_refused_result_is_parked_with_an_alarm(world, temporal_env):
    client = temporal_env.client
    order_id = new_order_id()
    await world.account("@q-1", "100")
    await world.order(order_id, amount="10")
    await world.mensageria.post("/_sim/faults", json={"route": "results.post", "status": 422})
    async with world.worker(client):
        await world.execute(client, order_id)
        await world.tick(client)
        await world.tick(client)
    rows = {r.idempotency_key: r for r in await stored(world, SisbajudOutbox,
                                                       order_id=order_id)}
    parked = rows[f"{order_id}:1:accepted"]  # the first one sent met the refusal
    assert parked.state == "PARKED" and parked.attempts == 1
    assert rows[f"{order_id}:1:1"].state == "SENT"
    assert [a.code for a in await stored(world, SisbajudAlarm)] == ["result.rejected"]


async def test_a_failing_stage_does_not_stop_the_others(temporal_env, task_queue):
    ran: list[str] = []

    def stage(name: str, fails: bool):
        @activity.defn(name=f"sisbajud-stage-{name}")
        async def run(request: TickInput) -> StageResult:
            ran.append(name)
            if fails:
                raise ApplicationError(f"{name} broke", non_retryable=True)
            return StageResult(stage=StageName(name), done=1)

        return run

    activities = [stage("ingest", True), stage("orphans", False), stage("monitor", True),
                  stage("drain", False)]
    async with Worker(temporal_env.client, task_queue=task_queue,
                      workflows=[SisbajudTickWorkflow]), \
            Worker(temporal_env.client, task_queue=stage_task_queue(task_queue),
                   activities=activities):
        result = await temporal_env.client.execute_workflow(
            TICK_WORKFLOW, TickInput(task_queue=task_queue), id=f"tick-{uuid.uuid4()}",
            task_queue=task_queue, result_type=TickResult,
            # Stages only run on their own queue: scheduled anywhere else, the run times out.
            execution_timeout=timedelta(seconds=60))
    assert ran == ["ingest", "orphans", "monitor", "drain"]
    assert [(s.stage.value, s.ok) for s in result.stages] == [
        ("ingest", False), ("orphans", True), ("monitor", False), ("drain", True)]


@SQLITE_ONLY
async def test_the_schedule_runs_ticks_on_its_own(world, temporal_env):
    client = temporal_env.client
    settings = world.settings.model_copy(update={"sisbajud": world.settings.sisbajud.model_copy(
        update={"tick_every_seconds": 1.0})})
    order_id = new_order_id()
    await world.account("@s-1", "100")
    await world.order(order_id, amount="10")
    await _notify(world, order_id)
    schedule_id = await ensure_tick_schedule(client, settings)
    try:
        assert schedule_id == tick_schedule_id(settings.sisbajud.task_queue)
        described = await client.get_schedule_handle(schedule_id).describe()
        assert described.schedule.spec.intervals[0].every == timedelta(seconds=1)
        assert described.schedule.policy.overlap == ScheduleOverlapPolicy.SKIP
        assert described.schedule.action.args  # the settings' TickInput
        await ensure_tick_schedule(client, settings)  # a second worker start updates in place
        async with world.worker(client):
            for _ in range(100):
                if final_keys(await world.results(order_id)):
                    break
                await asyncio.sleep(0.1)
    finally:
        await client.get_schedule_handle(schedule_id).delete()
    assert final_keys(await world.results(order_id)) == [f"{order_id}:1:1"]
    assert tick_input(settings).task_queue == settings.sisbajud.task_queue
