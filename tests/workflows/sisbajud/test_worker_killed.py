"""kill -9 of a worker between the ledger write and the result: the same key, a replay."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import ResetStickyTaskQueueRequest
from temporalio.service import RPCError, RPCStatusCode

from activities.sisbajud.contracts import names
from activities.sisbajud.contracts.orders import (
    TICK_WORKFLOW,
    OrderState,
    block_account_alias,
    order_workflow_id,
)
from activities.sisbajud.models import SisbajudWrite
from activities.sisbajud.setup import tick_input
from shared.settings import InstitutionSettings
from tests.support.sisbajud import LEDGER, ORG, World, new_order_id, serve, stored
from tests.support.sisbajud_states import finals, states

REPO = Path(__file__).resolve().parents[3]


def _worker_env(world: World, temporal_address: str, midaz: str, mensageria: str,
                data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ESTEIRA_", "TEMPORAL_"))}
    institution = {"id": "BANK1", "base_url": midaz,
                   "organization_id": ORG, "ledger_id": LEDGER}
    sis = world.settings.sisbajud
    env.update({
        "PYTHONPATH": str(REPO), "ESTEIRA_DATA_DIR": str(data_dir),
        "ESTEIRA_LOGGING__TO_FILE": "false", "TEMPORAL_ADDRESS": temporal_address,
        "ESTEIRA_DATABASE_URL": world.settings.sqlalchemy_url,
        "ESTEIRA_SISBAJUD__TASK_QUEUE": sis.task_queue,
        "ESTEIRA_SISBAJUD__INSTITUTIONS": json.dumps([institution]),
        "ESTEIRA_SISBAJUD__MENSAGERIA_URL": mensageria,
        "ESTEIRA_SISBAJUD__TICK_EVERY_SECONDS": "3600",
        "ESTEIRA_SISBAJUD__WRITE_HEARTBEAT_TIMEOUT_SECONDS": "2",
        # The survivor runs in this process on the session's client, which has no payload
        # key: both workers must speak the same data converter.
        "ESTEIRA_PAYLOAD_CODEC__ENABLED": "false",
    })
    return env


async def _wait_for(condition, what: str, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await condition():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def test_kill_9_between_ledger_write_and_result_writes_once(world, temporal_env,
                                                                 tmp_path):
    client = temporal_env.client
    order_id = new_order_id()
    await world.account("@k-1", "70")
    await world.account("@k-2", "50")
    await world.order(order_id, amount="100")
    # Midaz applies the write, then holds the answer: the worker dies waiting for it.
    (await world.midaz.post("/_sim/faults", json={
        "route": "transactions.create.block", "kind": "timeout_after_write",
        "delay_s": 20})).raise_for_status()
    with serve(world.midaz_app) as midaz, serve(world.mensageria_app) as mensageria:
        env = _worker_env(world, client.service_client.config.target_host, midaz, mensageria,
                          tmp_path / "data")
        doomed = subprocess.Popen([sys.executable, "-m", "services.cli", "worker", "--domains",
                                   "sisbajud"], cwd=tmp_path, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            run = asyncio.create_task(world.execute(client, order_id))

            async def written() -> bool:
                return len(await world.transactions()) == 1

            await _wait_for(written, "the ledger write")
            os.kill(doomed.pid, signal.SIGKILL)
            assert doomed.wait(timeout=10) == -signal.SIGKILL
            # What a worker does when it evicts a run: its next task goes to the shared queue
            # now rather than after the dead worker's sticky timeout (10 s).
            await client.workflow_service.reset_sticky_task_queue(ResetStickyTaskQueueRequest(
                namespace=client.namespace,
                execution=WorkflowExecution(workflow_id=order_workflow_id(order_id))),
                retry=True)
        finally:
            if doomed.poll() is None:
                doomed.kill()
        settings = world.settings.model_copy(update={"sisbajud": world.settings.sisbajud
                                                     .model_copy(update={
            "mensageria_url": mensageria, "institutions": [InstitutionSettings(
                id="BANK1", base_url=midaz, organization_id=ORG,
                ledger_id=LEDGER)]})})
        survivor = World(settings, apps=(world.midaz_app, world.mensageria_app))
        try:
            async with survivor.worker(client):
                result = await asyncio.wait_for(run, 60)
                await survivor.tick(client)
        finally:
            await survivor.close()
        await _drop_tick_schedule(client, world)
    assert result.last_state == OrderState.RESOLVED
    (tx,) = await world.transactions()
    assert tx["metadata"]["code"] == f"{order_id}:1"
    assert await world.balance(block_account_alias(order_id)) == 100
    assert await world.balance("@k-1") + await world.balance("@k-2") == 20
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert write.state == "APPLIED" and write.replayed and write.transaction_id == tx["id"]
    results = await world.results(order_id)
    # The killed worker's progress states are not sent again by the survivor.
    assert states(results) == [("accepted", "ACCEPTED"), ("executing", "EXECUTING"),
                               ("1", "RESOLVED")]
    assert len(results["attempts"]) == 3
    assert finals(results)[0]["body"]["reasonCode"] == "BLOCKED_TOTAL"


async def test_kill_9_mid_plan_is_noticed_by_the_heartbeat_within_seconds(world, temporal_env,
                                                                         tmp_path):
    client = temporal_env.client
    order_id = new_order_id()
    await world.account("@p-1", "80")
    await world.order(order_id, amount="30")
    # The CRM read of the plan hangs: the worker dies inside plan_block, long before the
    # activity's 2-minute start-to-close timeout.
    (await world.midaz.post("/_sim/faults", json={
        "route": "crm.*", "kind": "timeout", "delay_s": 60})).raise_for_status()
    with serve(world.midaz_app) as midaz, serve(world.mensageria_app) as mensageria:
        env = _worker_env(world, client.service_client.config.target_host, midaz, mensageria,
                          tmp_path / "data")
        env["ESTEIRA_SISBAJUD__ACTIVITY_HEARTBEAT_TIMEOUT_SECONDS"] = "2"
        doomed = subprocess.Popen([sys.executable, "-m", "services.cli", "worker", "--domains",
                                   "sisbajud"], cwd=tmp_path, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            run = asyncio.create_task(world.execute(client, order_id))

            async def planning() -> bool:
                return (await world.midaz.get("/_sim/faults")).json() == []

            await _wait_for(planning, "the plan's CRM read")
            await asyncio.sleep(1)  # past the first beat: the activity is alive, then dies
            os.kill(doomed.pid, signal.SIGKILL)
            assert doomed.wait(timeout=10) == -signal.SIGKILL
            killed_at = asyncio.get_running_loop().time()
            await client.workflow_service.reset_sticky_task_queue(ResetStickyTaskQueueRequest(
                namespace=client.namespace,
                execution=WorkflowExecution(workflow_id=order_workflow_id(order_id))),
                retry=True)
        finally:
            if doomed.poll() is None:
                doomed.kill()
        settings = world.settings.model_copy(update={"sisbajud": world.settings.sisbajud
                                                     .model_copy(update={
            "mensageria_url": mensageria, "institutions": [InstitutionSettings(
                id="BANK1", base_url=midaz, organization_id=ORG,
                ledger_id=LEDGER)]})})
        survivor = World(settings, apps=(world.midaz_app, world.mensageria_app))
        try:
            async with survivor.worker(client):
                # The heartbeat timeout (2 s) hands the plan to the survivor; without it the
                # start-to-close timeout would hold the order for two minutes.
                result = await asyncio.wait_for(run, 20)
                took = asyncio.get_running_loop().time() - killed_at
        finally:
            await survivor.close()
        await _drop_tick_schedule(client, world)
    assert result.last_state == OrderState.RESOLVED and took < 15
    assert await world.balance(block_account_alias(order_id)) == 30
    (tx,) = await world.transactions()
    assert tx["metadata"]["code"] == f"{order_id}:1"



async def test_every_long_activity_is_scheduled_with_a_heartbeat_timeout(make_world,
                                                                        temporal_env):
    world = await make_world(heartbeat_every_seconds=0.3, human_decision_after_beats=20,
                             activity_heartbeat_timeout_seconds=4)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@hb-1", "100")
    await world.order(order_id, amount="10")
    (await world.midaz.post("/_sim/faults", json={
        "route": "transactions.create.block", "kind": "write_without_proof",
        "recovery_s": 0.5})).raise_for_status()
    async with world.worker(client):
        handle = await world.start_order(client, order_id)
        assert (await handle.result()).last_state == OrderState.RESOLVED
        tick = await client.start_workflow(
            TICK_WORKFLOW, tick_input(world.settings), id=f"tick-{uuid.uuid4()}",
            task_queue=world.settings.sisbajud.task_queue)
        await tick.result()
    timeouts = {}
    for run in (handle, tick):
        async for event in run.fetch_history_events():
            if event.HasField("activity_task_scheduled_event_attributes"):
                attrs = event.activity_task_scheduled_event_attributes
                timeouts[attrs.activity_type.name] = attrs.heartbeat_timeout.ToSeconds()
    assert timeouts == {
        names.FETCH_ORDER_ACTIVITY: 4, names.PLAN_BLOCK_ACTIVITY: 4,
        names.ENSURE_BLOCK_ACCOUNT_ACTIVITY: 4, names.WRITE_LEDGER_ACTIVITY: 3,
        names.RECONCILE_WRITE_ACTIVITY: 4, names.STAGE_INGEST_ACTIVITY: 10,
        names.STAGE_ORPHANS_ACTIVITY: 10, names.STAGE_MONITOR_ACTIVITY: 10,
        names.STAGE_DRAIN_ACTIVITY: 10}


async def _drop_tick_schedule(client, world) -> None:
    """Delete the tick schedule the workers created; one already gone is fine."""
    schedule = f"sisbajud-tick:{world.settings.sisbajud.task_queue}"
    try:
        await client.get_schedule_handle(schedule).delete()
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
