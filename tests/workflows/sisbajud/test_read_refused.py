"""A Midaz read refused (403, 404): alarm `ledger.read-failed` and a person's decision, due by
the order's deadline minus the margin; the read is not tried again."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from activities.sisbajud.models import SisbajudAlarm, SisbajudHumanDecision, SisbajudWrite
from activities.sisbajud.operator import SisbajudOperations
from shared.temporal import TemporalHandle
from tests.support.sisbajud import new_order_id, stored
from tests.support.sisbajud_states import finals, states

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
MARGIN_S = 3600
# More uses than any retry would take: what is left shows how often the route was called.
SPOILED = 50


async def _refuse(world, route: str, status: int, code: str) -> None:
    (await world.midaz.post("/_sim/faults", json={
        "route": route, "kind": "error", "status": status, "code": code,
        "count": SPOILED})).raise_for_status()


async def _calls(world) -> int:
    """How many calls the refusal answered so far."""
    left = (await world.midaz.get("/_sim/faults")).json()
    return SPOILED - sum(rule["count"] for rule in left)


@pytest.mark.parametrize(("operation", "route", "status", "code"), [
    ("BLOQUEIO", "balances.by_alias", 403, "0042"),
    ("BLOQUEIO", "crm.instruments", 404, "0007"),
    ("REQUISICAO_INFORMACAO", "crm.instruments", 403, "0042"),
    ("REQUISICAO_INFORMACAO", "balances.by_alias", 404, "0085"),
], ids=["block-balances-403", "block-crm-404", "info-crm-403", "info-balances-404"])
async def test_a_refused_read_is_an_alarm_and_a_decision_due_before_the_deadline(
        make_world, temporal_env, operation, route, status, code):
    world = await make_world(response_deadline_margin_seconds=MARGIN_S)
    client, order_id = temporal_env.client, new_order_id()
    deadline = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    await world.account("@refused-1", "100")
    await world.order(order_id, operation, amount="40", deadline=deadline.isoformat())
    await _refuse(world, route, status, code)
    async with world.worker(client):
        await world.hold(client, order_id)
        await world.tick(client)
        await asyncio.sleep(1.5)  # time for any retry to show
    assert await _calls(world) == 1  # refused once, never tried again

    (alarm,) = await stored(world, SisbajudAlarm, order_id=order_id)
    assert alarm.code == "ledger.read-failed" and str(status) in alarm.message
    face = SisbajudOperations(world.settings, world.sessions, TemporalHandle.of(client),
                              http=world.http)
    (decision,) = (await face.decisions.list(True, 10)).items
    assert (decision.order_id, decision.reason, decision.human_disposition) == (
        order_id, "ledger.read-refused", None)
    assert decision.decide_by == deadline - timedelta(seconds=MARGIN_S)
    assert decision.detail is not None
    assert f"{status} {code}" in decision.detail and "grant the executor" in decision.detail
    assert await world.transactions() == []
    received = await world.results(order_id)
    assert states(received)[-1] == ("awaiting-person", "AWAITING_RECONCILIATION")
    assert finals(received) == []


async def test_a_refused_block_account_lookup_goes_to_a_person_too(make_world, temporal_env):
    world = await make_world()
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@refused-2", "100")
    await world.order(order_id, amount="40")
    # The block account exists already (409 0020), and looking it up is refused.
    (await world.midaz.post("/_sim/accounts", json={
        "organizationId": world.ledger.organization_id, "ledgerId": world.ledger.ledger_id,
        "alias": f"@block_sisbajud_{order_id.replace('-', '')}"})).raise_for_status()
    await _refuse(world, "accounts.list", 403, "0042")
    async with world.worker(client):
        await world.hold(client, order_id)
    assert await _calls(world) == 1
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    assert decision.reason == "ledger.read-refused" and decision.decide_by is None  # no deadline
    assert [a.code for a in await stored(world, SisbajudAlarm, order_id=order_id)] == [
        "ledger.read-failed"]


async def test_a_refused_re_read_of_a_write_without_proof_asks_the_people_at_once(
        make_world, temporal_env):
    world = await make_world(heartbeat_every_seconds=0.3, human_decision_after_beats=50,
                             response_deadline_margin_seconds=MARGIN_S)
    client, order_id = temporal_env.client, new_order_id()
    deadline = (datetime.now(UTC) + timedelta(days=2)).replace(microsecond=0)
    await world.account("@refused-3", "100")
    await world.order(order_id, amount="40", deadline=deadline.isoformat())
    (await world.midaz.post("/_sim/faults", json={
        "route": "transactions.create.block", "kind": "write_without_proof",
        "recovery_s": 3600})).raise_for_status()
    await _refuse(world, "transactions.list", 403, "0042")
    async with world.worker(client):
        await world.hold(client, order_id)
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    # Not after 50 unchanged beats: the first refused re-read opens it, money held.
    assert (decision.reason, decision.disposition) == ("ledger.write-indeterminate",
                                                       "HELD_MONEY_MOVED")
    assert "re-read was refused" in (decision.detail or "") and "403" in (decision.detail or "")
    assert decision.decide_by is not None
    assert decision.decide_by.replace(tzinfo=UTC) == deadline - timedelta(seconds=MARGIN_S)
    assert [a.code for a in await stored(world, SisbajudAlarm, order_id=order_id)] == [
        "ledger.write-indeterminate", "ledger.read-failed"]
    (write,) = await stored(world, SisbajudWrite, order_id=order_id)
    assert write.state == "INDETERMINATE"
