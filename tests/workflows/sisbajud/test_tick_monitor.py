"""Tick stage 3: each write without proof has a live monitor; a lost one restarts, a stuck one
is alarmed."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import timedelta
from types import SimpleNamespace

import pytest
from sqlalchemy import update
from sqlalchemy.engine import make_url
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import ActivityEnvironment

from activities.sisbajud.contracts.orders import OrderState, StageName, block_account_alias
from activities.sisbajud.metrics import UNCERTAIN_WRITES
from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudOrder,
    SisbajudOutbox,
    SisbajudWrite,
)
from activities.sisbajud.setup import tick_input
from activities.sisbajud.tick import TickActivities
from shared.db.models import utcnow
from tests.support.sisbajud import new_order_id, stored
from tests.support.sisbajud_states import numbered

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


async def _no_proof(world) -> None:
    """Every block answers 409 0084 (a claim without a value): nothing ever proves it."""
    (await world.midaz.post("/_sim/faults", json={
        "route": "transactions.create.block", "kind": "error", "status": 409, "code": "0084",
        "count": 50})).raise_for_status()


async def _beats(world, order_id) -> list[str]:
    rows = await stored(world, SisbajudOutbox, order_id=order_id)
    return sorted((r.idempotency_key for r in rows if numbered(r.idempotency_key)),
                  key=lambda k: int(k.rsplit(":", 1)[-1]))


def _stage(tick):
    (stage,) = [s for s in tick.stages if s.stage == StageName.MONITOR]
    return stage


async def test_a_terminated_monitor_is_restarted_and_beats_on(make_world, temporal_env):
    world = await make_world(heartbeat_every_seconds=0.3, human_decision_after_beats=50)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@mon-1", "100")
    await world.order(order_id, amount="20")
    await _no_proof(world)
    async with world.worker(client):
        handle = await world.hold(client, order_id, "INDETERMINATE")
        healthy = _stage(await world.tick(client))
        assert healthy.ok and "1 monitored" in healthy.detail
        await handle.terminate("an operator's mistake")
        before = await _beats(world, order_id)
        restarted = _stage(await world.tick(client))
        assert "1 restarted" in restarted.detail
        (alarm,) = await stored(world, SisbajudAlarm, code="ledger.monitor-lost")
        assert alarm.order_id == order_id and "TERMINATED" in alarm.message
        for _ in range(100):  # the new run goes on beating where the old one stopped
            if len(await _beats(world, order_id)) >= len(before) + 2:
                break
            await asyncio.sleep(0.05)
        after = await _beats(world, order_id)
        assert after[:len(before)] == before and len(after) >= len(before) + 2
        again = _stage(await world.tick(client))
        assert again.ok and "1 monitored" in again.detail
        assert len(await stored(world, SisbajudAlarm, code="ledger.monitor-lost")) == 1
        described = await client.get_workflow_handle(handle.id).describe()
        assert described.run_id != handle.result_run_id
        world.handles.append(client.get_workflow_handle(handle.id))
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert write.state == "INDETERMINATE"
    assert (await stored(world, SisbajudAlarm, code="ledger.monitor-stuck")) == []


async def test_a_running_monitor_that_stopped_beating_is_alarmed(make_world, temporal_env):
    world = await make_world(heartbeat_every_seconds=60, human_decision_after_beats=50)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@mon-2", "100")
    await world.order(order_id, amount="20")
    await _no_proof(world)
    async with world.worker(client):
        await world.hold(client, order_id, "INDETERMINATE")
        assert _stage(await world.tick(client)).ok
        # As if its last beat and write attempt were a day ago.
        long_ago = utcnow() - timedelta(days=1)
        async with world.sessions() as session:
            await session.exec(update(SisbajudWrite).where(
                SisbajudWrite.order_id == order_id).values(updated_at=long_ago))
            await session.exec(update(SisbajudOutbox).where(
                SisbajudOutbox.order_id == order_id).values(created_at=long_ago))
            await session.commit()
        stuck = _stage(await world.tick(client))
        await world.tick(client)
    assert not stuck.ok and "1 stuck" in stuck.detail
    (alarm,) = await stored(world, SisbajudAlarm, code="ledger.monitor-stuck")
    assert alarm.order_id == order_id
    assert (await stored(world, SisbajudAlarm, code="ledger.monitor-lost")) == []
    assert OrderState.INDETERMINATE.value in {r.state for r in await stored(
        world, SisbajudWrite, order_id=order_id)}


async def test_a_write_resolved_before_resolutions_took_effect_is_settled(world,
                                                                         temporal_env):
    # Recorded by a version that closed the decision but left the write without proof.
    order_id, now = new_order_id(), utcnow()
    async with world.sessions() as session:
        session.add(SisbajudOrder(order_id=order_id, revision=1, operation="BLOQUEIO",
                                  state="RESOLVED", created_at=now, updated_at=now))
        session.add(SisbajudWrite(
            idempotency_key=f"{order_id}:1", order_id=order_id, revision=1, kind="block",
            institution_id="BANK1", block_alias=block_account_alias(order_id), total="30",
            legs=[], state="INDETERMINATE", created_at=now, updated_at=now))
        session.add(SisbajudHumanDecision(
            order_id=order_id, revision=1, reason="ledger.write-indeterminate",
            disposition="HELD_MONEY_MOVED", created_at=now, resolved_at=now,
            resolved_by="operator:rui, confirming operator:ana", resolution={
                "effect": "PARTIAL", "executedAmount": "12.00", "transactionId": "tx-12"}))
        await session.commit()
    async with world.worker(temporal_env.client):
        stage = _stage(await world.tick(temporal_env.client))
    assert "1 settled" in stage.detail and "0 indeterminate" in stage.detail
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert (write.state, write.applied_amount, write.transaction_id, write.resolved_by) == (
        "APPLIED", "12.00", "tx-12", "operator:rui, confirming operator:ana")
    assert UNCERTAIN_WRITES.labels("INDETERMINATE")._value.get() == 0


class _SlowTemporal:
    """A Temporal stand-in whose every `describe` takes a while (a slow frontend); while it
    answers, another process's writer tries to commit to the same SQLite file."""

    def __init__(self, database: str) -> None:
        self.database = database
        self.writes: list[str] = []

    def get_workflow_handle(self, workflow_id: str) -> SimpleNamespace:
        return SimpleNamespace(describe=self._describe)

    async def _describe(self) -> SimpleNamespace:
        self.writes.append(await asyncio.to_thread(self._write_elsewhere))
        return SimpleNamespace(status=WorkflowExecutionStatus.RUNNING)

    def _write_elsewhere(self) -> str:
        # Half a second of busy wait, where the store's own writers wait ten: enough for any
        # short transaction, not for one held across the describe.
        connection = sqlite3.connect(self.database, timeout=0.5)
        try:
            connection.execute("UPDATE sisbajud_orders SET detail = 'another writer' "
                               "WHERE order_id = 'bystander'")
            connection.commit()
            return "committed"
        except sqlite3.OperationalError as exc:
            return str(exc)
        finally:
            connection.close()


async def test_stage_3_asks_temporal_with_no_write_transaction_open(world):
    long_ago = utcnow() - timedelta(days=1)
    async with world.sessions() as session:
        session.add(SisbajudOrder(order_id="bystander", revision=1, operation="BLOQUEIO",
                                  state="RESOLVED", created_at=long_ago, updated_at=long_ago))
        for _ in range(3):  # each alarmed as stuck, the next described after it
            order_id = new_order_id()
            session.add(SisbajudOrder(order_id=order_id, revision=1, operation="BLOQUEIO",
                                      state="INDETERMINATE", requested_amount="10",
                                      created_at=long_ago, updated_at=long_ago))
            session.add(SisbajudWrite(
                idempotency_key=f"{order_id}:1", order_id=order_id, revision=1, kind="block",
                institution_id="BANK1", block_alias=block_account_alias(order_id),
                total="10", legs=[], state="INDETERMINATE", created_at=long_ago,
                updated_at=long_ago))
        await session.commit()
    temporal = _SlowTemporal(make_url(world.settings.sqlalchemy_url).database)

    async def provider() -> _SlowTemporal:
        return temporal

    stages = TickActivities(world.settings, world.sessions, world.http, provider)
    stage = await ActivityEnvironment().run(stages.monitor, tick_input(world.settings))
    assert "3 stuck" in stage.detail
    assert temporal.writes == ["committed"] * 3
    assert len(await stored(world, SisbajudAlarm, code="ledger.monitor-stuck")) == 3
