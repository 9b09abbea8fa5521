"""Ownership against the subject of our Midaz token, on simulators that check every token."""

from __future__ import annotations

import pytest
import pytest_asyncio

from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from services.simulators.oauth import OAuthClient
from shared.db.sisbajud_models import SisbajudAlarm, SisbajudInstitution, SisbajudOrder
from shared.settings import DEV_M2M_CLIENT_ID, DEV_M2M_CLIENT_SECRET
from tests.support.sisbajud import LEDGER, ORG, World, new_order_id, sisbajud_settings, stored

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
# The dev client (the executor's fallback in Development) is issued tokens for `exec-A`.
CLIENTS = {DEV_M2M_CLIENT_ID: OAuthClient(DEV_M2M_CLIENT_SECRET, "exec-A")}


@pytest_asyncio.fixture
async def strict_world(settings, task_queue):
    """A World whose simulators take only tokens they issued (plus the harness's own `t`)."""
    worlds: list[World] = []

    async def make(owner: str | None, **overrides) -> World:
        apps = (midaz_app(tokens=["t"], clients=CLIENTS),
                mensageria_app(tokens=["t"], clients=CLIENTS))
        world = await World(sisbajud_settings(settings, task_queue, **overrides),
                            apps=apps).start()
        worlds.append(world)
        if owner is not None:
            (await world.midaz.post("/_sim/bootstrap", json={
                "organizationId": ORG, "ledgerId": LEDGER,
                "ledgerMetadata": {"sisbajudOwner": owner}})).raise_for_status()
        return world

    yield make
    for world in worlds:
        await world.close()


async def _run(world: World, client, amount: str = "40") -> SisbajudOrder:
    order_id = new_order_id()
    await world.order(order_id, amount=amount)
    async with world.worker(client):
        await world.execute(client, order_id)
        await world.tick(client)
    (row,) = await stored(world, SisbajudOrder, order_id=order_id)
    return row


async def _token_requests(world: World) -> tuple[int, int]:
    return (world.midaz_app.state.oauth.requests, world.mensageria_app.state.oauth.requests)


async def test_a_ledger_owned_by_another_subject_gets_no_write(strict_world, temporal_env):
    # EXECUTOR_M2M_SUBJECT claims the owner's name: a string nobody vouches for changes nothing.
    world = await strict_world(owner="exec-B", m2m_subject="exec-B")
    await world.account("@own-1", "100")
    row = await _run(world, temporal_env.client)
    assert row.state == "FOREIGN_OWNER" and "exec-B" in (row.detail or "")
    assert [a.code for a in await stored(world, SisbajudAlarm)] == ["institution.foreign-owner"]
    assert await world.transactions() == []
    results = (await world.results())["results"]
    assert [r for r in results if r["body"]["executionState"] == "RESOLVED"] == []


async def test_a_ledger_owned_by_our_token_subject_is_written_with_cached_tokens(
        strict_world, temporal_env):
    world = await strict_world(owner="exec-A")  # m2m_subject stays the default, unlike exec-A
    await world.account("@own-2", "100")
    row = await _run(world, temporal_env.client)
    assert row.reason_code == "BLOCKED_TOTAL"
    (institution,) = await stored(world, SisbajudInstitution)
    assert institution.owner_subject == "exec-A"
    assert len(await world.transactions()) == 1
    results = (await world.results())["results"]
    assert any(r["body"]["executionState"] == "RESOLVED" for r in results)
    # Every Midaz and Mensageria call of the order and the tick rode on one token each.
    assert await _token_requests(world) == (1, 1)


async def test_without_a_reported_owner_the_creating_token_subject_owns(strict_world,
                                                                        temporal_env):
    world = await strict_world(owner=None)
    await world.account("@own-3", "100")
    row = await _run(world, temporal_env.client)
    assert row.reason_code == "BLOCKED_TOTAL"
    (institution,) = await stored(world, SisbajudInstitution)
    assert institution.owner_subject == "exec-A"
