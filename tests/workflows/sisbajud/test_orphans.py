"""Orphan check: operations on a block account that this executor did not write."""

from __future__ import annotations

import pytest

from activities.sisbajud.contracts.orders import StageName, block_account_alias
from activities.sisbajud.models import SisbajudAlarm, SisbajudOrphan
from services.simulators.midaz.testkit import send
from tests.support.sisbajud import new_order_id, stored

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


def _orphan_stage(tick):
    (stage,) = [s for s in tick.stages if s.stage == StageName.ORPHANS]
    return stage


async def test_foreign_operations_are_reported_once_and_ours_never(world, temporal_env):
    client, order_id = temporal_env.client, new_order_id()
    alias = block_account_alias(order_id)
    await world.account("@own", "100")
    await world.account("@outsider", "100", document="55555555555")
    await world.order(order_id, amount="30")
    async with world.worker(client):
        await world.execute(client, order_id)
        clean = _orphan_stage(await world.tick(client))
        assert (clean.ok, clean.done) == (True, 0) and "1 block accounts" in clean.detail
        assert await stored(world, SisbajudOrphan) == []
        # Someone else writes to the block account: once without a code, once with a code
        # this executor never recorded.
        for metadata in (None, {"code": "another-system:7"}):
            (await world.midaz.post(f"{world.ledger.base}/transactions/json", json=send(
                {"@outsider": "5"}, {alias: "5"}, metadata=metadata))).raise_for_status()
        before = len(await world.transactions())
        found = _orphan_stage(await world.tick(client))
        again = _orphan_stage(await world.tick(client))
    assert (found.done, again.done) == (2, 0)
    orphans = sorted(await stored(world, SisbajudOrphan), key=lambda o: o.code or "")
    assert [(o.code, o.block_alias, o.direction, o.amount) for o in orphans] == [
        (None, alias, "credit", "5"), ("another-system:7", alias, "credit", "5")]
    alarms = await stored(world, SisbajudAlarm, code="ledger.orphan-operation")
    assert len(alarms) == 2
    assert len(await world.transactions()) == before  # detection only
    assert await world.balance(alias) == 40
