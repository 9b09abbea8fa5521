"""Long waits continue as new: the wait, its beat numbers and the open decision carry over."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError

from activities.sisbajud.contracts.orders import (
    ORDER_WORKFLOW,
    Effect,
    NoticeSignal,
    Operation,
    Order,
    OrderRunResult,
    OrderState,
    ReasonCode,
    ResolveDecisionInput,
    ResolveDecisionResult,
    RunOrderInput,
    order_workflow_id,
)
from activities.sisbajud.models import SisbajudAlarm, SisbajudHumanDecision, SisbajudWrite
from activities.sisbajud.setup import order_options
from tests.support.sisbajud import DOCUMENT, INSTITUTION, World, new_order_id, stored
from tests.support.sisbajud_states import finals, states
from workflows.sisbajud.carry import Carry, Wait, WaitKind

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
BLOCK = "transactions.create.block"
RESOLUTION = ResolveDecisionInput(revision=1, effect=Effect.NONE,
                                  reason_code=ReasonCode.NO_BALANCE, executed_amount=Decimal(0),
                                  actor="ana.souza", reason="ledger shows no movement")


async def _runs(client: Client, order_id: str, first_run_id: str) -> list[dict | None]:
    """The carry each run of the order's chain started with (None for the first run)."""
    carries: list[dict | None] = []
    run_id: str | None = first_run_id
    while run_id is not None:
        history = await client.get_workflow_handle(order_workflow_id(order_id),
                                                   run_id=run_id).fetch_history()
        started = history.events[0].workflow_execution_started_event_attributes
        carries.append(json.loads(started.input.payloads[0].data).get("carry"))
        last = history.events[-1]
        run_id = (last.workflow_execution_continued_as_new_event_attributes.new_execution_run_id
                  if last.HasField("workflow_execution_continued_as_new_event_attributes")
                  else None)
    return carries


async def _until_runs(client: Client, order_id: str, first_run_id: str, count: int) -> None:
    for _ in range(400):
        described = await client.get_workflow_handle(order_workflow_id(order_id)).describe()
        if described.run_id != first_run_id and len(
                await _runs(client, order_id, first_run_id)) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"order {order_id} never reached {count} runs")


def _latest(world: World, client: Client, order_id: str) -> WorkflowHandle:
    """The order's current run, whichever it is (terminated at `close` if still waiting)."""
    handle = client.get_workflow_handle(order_workflow_id(order_id), result_type=OrderRunResult)
    world.handles.append(handle)
    return handle


async def test_an_uncertain_write_heartbeats_across_runs_then_one_final_result(make_world,
                                                                              temporal_env):
    world = await make_world(heartbeat_every_seconds=0.2, human_decision_after_beats=100,
                             continue_as_new_after_events=30)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@long", "100")
    await world.order(order_id, amount="10")
    # Midaz answers 500 and shows the transaction only 3 s later: beats meanwhile.
    (await world.midaz.post("/_sim/faults", json={
        "route": BLOCK, "kind": "write_without_proof", "recovery_s": 3})).raise_for_status()
    async with world.worker(client):
        handle = await world.start_order(client, order_id)
        _latest(world, client, order_id)
        run = await handle.result()  # follows the chain to its last run
        await world.tick(client)
    assert run.last_state == OrderState.RESOLVED and run.executed == [1]
    carries = await _runs(client, order_id, handle.first_execution_run_id or "")
    assert len(carries) >= 3 and carries[0] is None  # two or more boundaries
    carried_beats = [c["wait"]["beats"] for c in carries[1:]]
    assert all(c["wait"]["kind"] == "MONITOR" for c in carries[1:])
    assert carried_beats == sorted(set(carried_beats)) and carried_beats[-1] > 0
    (tx,) = await world.transactions()  # the write went out once, never again after a switch
    assert tx["metadata"]["code"] == f"{order_id}:1"
    results = finals(await world.results(order_id))
    beats, final = results[:-1], results[-1]
    keys = [b["idempotencyKey"] for b in beats]
    # Beat numbers go on across runs: a restart would reuse (and so lose) keys.
    assert keys == [f"{order_id}:1:{n + 2}" for n in range(len(beats))]
    assert len(beats) >= carried_beats[-1]
    assert final["idempotencyKey"] == f"{order_id}:1:1"
    assert [r["idempotencyKey"] for r in results].count(f"{order_id}:1:1") == 1
    assert final["body"]["effect"] == "FULL"
    assert await world.balance("@long") == 90


async def test_a_held_order_continues_as_new_and_the_resolution_still_ends_it(make_world,
                                                                             temporal_env):
    world = await make_world(continue_as_new_after_events=10)
    client, order_id = temporal_env.client, new_order_id()
    await world.order(order_id, institutionId="UNKNOWN-BANK")
    async with world.worker(client):
        first = await world.hold(client, order_id)
        latest = _latest(world, client, order_id)
        # Only messages grow a held run: redelivered notices take it past the threshold.
        for _ in range(3):
            await latest.signal("notice", NoticeSignal(revision=1))
        await _until_runs(client, order_id, first.first_execution_run_id or "", 2)
        with pytest.raises(WorkflowUpdateFailedError):  # the validator holds in the new run
            await latest.execute_update("resolve", RESOLUTION.model_copy(update={"revision": 2}))
        # As the API does: the update targets the workflow id, so it reaches the new run.
        done = await latest.execute_update("resolve", RESOLUTION,
                                           result_type=ResolveDecisionResult)
        assert done.result_key == f"{order_id}:1:1"
        run = await latest.result()
        await world.tick(client)
    assert run.last_state == OrderState.RESOLVED
    carries = await _runs(client, order_id, first.first_execution_run_id or "")
    # The held wait rolled once and then waited: a fresh run does not roll again at once.
    assert [c["wait"]["kind"] for c in carries[1:]] == ["HUMAN"]
    (result,) = finals(await world.results(order_id))
    assert (result["idempotencyKey"], result["body"]["effect"]) == (f"{order_id}:1:1", "NONE")
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    assert decision.resolved_by == "ana.souza"


async def test_heartbeats_held_for_a_person_go_on_across_runs_until_the_resolution(
        make_world, temporal_env):
    world = await make_world(heartbeat_every_seconds=0.2, human_decision_after_beats=2,
                             continue_as_new_after_events=30)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@held", "100")
    await world.order(order_id, amount="30")
    (await world.midaz.post("/_sim/faults", json={
        "route": BLOCK, "kind": "error", "status": 409, "code": "0084"})).raise_for_status()
    async with world.worker(client):
        first = await world.hold(client, order_id)
        await _until_runs(client, order_id, first.first_execution_run_id or "", 3)
        latest = _latest(world, client, order_id)
        done = await latest.execute_update("resolve", RESOLUTION,
                                           result_type=ResolveDecisionResult)
        assert done.result_key == f"{order_id}:1:1"
        with pytest.raises((WorkflowUpdateFailedError, RPCError)):
            await latest.execute_update("resolve", RESOLUTION)
        run = await latest.result()
        await world.tick(client)
    assert run.last_state == OrderState.RESOLVED
    carries = await _runs(client, order_id, first.first_execution_run_id or "")
    assert {c["wait"]["state"] for c in carries[2:]} == {"HUMAN_DECISION"}
    results = finals(await world.results(order_id))
    keys = [r["idempotencyKey"] for r in results]
    assert keys[:-1] == [f"{order_id}:1:{n + 2}" for n in range(len(keys) - 1)]
    assert keys[-1] == f"{order_id}:1:1" and results[-1]["body"]["effect"] == "NONE"
    # One decision row: a new run resumes the held wait, it does not open another one.
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    assert decision.resolved_by == "ana.souza"
    assert await world.transactions() == []


async def test_a_resolution_in_the_first_task_of_a_new_run_sees_the_carried_decision(
        world, temporal_env):
    client, order_id = temporal_env.client, new_order_id()
    order = Order(order_id=order_id, revision=1, operation=Operation.BLOQUEIO,
                  institution_id=INSTITUTION, document=DOCUMENT, amount=Decimal(100))
    carry = Carry(seen=[1], executed=[1], last_state=OrderState.HUMAN_DECISION, pending=[],
                  wait=Wait(kind=WaitKind.HUMAN, order=order))
    # Update-with-start puts the update in the run's first task, as a resolution sent while
    # the previous run continues as new arrives: before `run` has restored anything.
    start = WithStartWorkflowOperation(
        ORDER_WORKFLOW, RunOrderInput(order_id=order_id, options=order_options(world.settings),
                                      carry=carry.model_dump(mode="json")),
        id=order_workflow_id(order_id), task_queue=world.settings.sisbajud.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.FAIL, result_type=OrderRunResult)
    async with world.worker(client):
        done = await client.execute_update_with_start_workflow(
            "resolve", RESOLUTION, start_workflow_operation=start,
            result_type=ResolveDecisionResult)
        handle = await start.workflow_handle()
        world.handles.append(handle)
        run = await handle.result()
        await world.tick(client)
    assert done.result_key == f"{order_id}:1:1"
    assert (run.executed, run.last_state) == ([1], OrderState.RESOLVED)
    (result,) = finals(await world.results(order_id))
    assert (result["idempotencyKey"], result["body"]["effect"]) == (f"{order_id}:1:1", "NONE")


async def test_a_deferred_write_is_tried_again_across_runs_and_goes_out_once(make_world,
                                                                            temporal_env):
    world = await make_world(heartbeat_every_seconds=0.2, continue_as_new_after_events=30)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@deferred", "100")
    await world.order(order_id, amount="40")
    # The route is refused 6 times: the write is deferred and sent again each period.
    (await world.midaz.post("/_sim/faults", json={
        "route": BLOCK, "kind": "reject", "status": 422, "code": "0117",
        "count": 6})).raise_for_status()
    async with world.worker(client):
        handle = await world.start_order(client, order_id)
        _latest(world, client, order_id)
        run = await handle.result()
        await world.tick(client)
    assert run.last_state == OrderState.RESOLVED
    carries = await _runs(client, order_id, handle.first_execution_run_id or "")
    assert len(carries) >= 3 and {c["wait"]["kind"] for c in carries[1:]} == {"DEFERRED"}
    # A new run resumes the wait: no extra send, no second DEFERRED alarm.
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert (write.state, write.attempts) == ("APPLIED", 7)
    alarms = [a.code for a in await stored(world, SisbajudAlarm, order_id=order_id)]
    assert alarms == ["ledger.write-deferred"]
    (tx,) = await world.transactions()
    assert tx["metadata"]["code"] == f"{order_id}:1" and tx["amount"] == "40"
    received = await world.results(order_id)
    (result,) = finals(received)
    assert result["idempotencyKey"] == f"{order_id}:1:1"
    # Seven sends over several runs: each progress state still went out once.
    assert states(received) == [("accepted", "ACCEPTED"), ("executing", "EXECUTING"),
                                ("awaiting-deferral", "AWAITING_RECONCILIATION"),
                                ("1", "RESOLVED")]
    assert len(received["attempts"]) == 4


async def test_a_release_waits_for_its_parent_across_runs(make_world, temporal_env):
    world = await make_world(continue_as_new_after_events=30)  # polls every 0.5 s
    client = temporal_env.client
    await world.account("@parent", "25")
    parent, child = new_order_id(), new_order_id()
    await world.order(parent, amount="25")
    await world.order(child, "DESBLOQUEIO", amount="25", parentOrderId=parent,
                      deadline=(datetime.now(UTC) + timedelta(minutes=5)).isoformat())
    async with world.worker(client):
        first = await world.hold(client, child, "WAITING_PARENT")
        latest = _latest(world, client, child)
        await _until_runs(client, child, first.first_execution_run_id or "", 3)
        await world.execute(client, parent)
        run = await latest.result()
        await world.tick(client)
    assert run.last_state == OrderState.RESOLVED
    carries = await _runs(client, child, first.first_execution_run_id or "")
    assert {c["wait"]["kind"] for c in carries[1:]} == {"PARENT"}
    received = await world.results(child)
    (result,) = finals(received)
    assert result["body"]["reasonCode"] == "UNBLOCKED_TOTAL"
    # Held by its parent across runs (one AWAITING_RECONCILIATION), then the release.
    assert states(received) == [("accepted", "ACCEPTED"),
                                ("awaiting-parent", "AWAITING_RECONCILIATION"),
                                ("executing", "EXECUTING"), ("1", "RESOLVED")]
    assert await world.balance("@parent") == 25
