"""Ownership as the seed says: the executor records its own EXECUTOR_M2M_SUBJECT as owner when
it creates an institution and writes only for institutions that subject owns; on simulators
that check every token."""

from __future__ import annotations

import pytest
import pytest_asyncio

from activities.sisbajud.models import SisbajudAlarm, SisbajudInstitution, SisbajudOrder
from activities.sisbajud.setup import claim_institutions
from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from services.simulators.oauth import OAuthClient
from shared.db.models import utcnow
from shared.settings import DEV_M2M_CLIENT_ID, DEV_M2M_CLIENT_SECRET
from tests.support.sisbajud import INSTITUTION, World, new_order_id, sisbajud_settings, stored

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
SUBJECT = "esteira/exec-A"
# The dev client (the executor's fallback in Development) is issued tokens for `SUBJECT`.
CLIENTS = {DEV_M2M_CLIENT_ID: OAuthClient(DEV_M2M_CLIENT_SECRET, SUBJECT)}


@pytest_asyncio.fixture
async def strict_world(settings, task_queue):
    """A World whose simulators issue the dev client tokens for `SUBJECT`."""
    worlds: list[World] = []

    async def make(**overrides) -> World:
        apps = midaz_app(clients=CLIENTS), mensageria_app(clients=CLIENTS)
        world = await World(sisbajud_settings(settings, task_queue, **overrides),
                            apps=apps).start()
        worlds.append(world)
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


async def test_an_institution_created_by_another_subject_gets_no_write(strict_world,
                                                                       temporal_env):
    world = await strict_world(m2m_subject=SUBJECT)
    async with world.sessions() as session:
        session.add(SisbajudInstitution(institution_id=INSTITUTION, owner_subject="esteira/B",
                                        created_at=utcnow()))
        await session.commit()
    await world.account("@own-1", "100")
    row = await _run(world, temporal_env.client)
    assert row.state == "FOREIGN_OWNER" and "esteira/B" in (row.detail or "")
    assert [a.code for a in await stored(world, SisbajudAlarm)] == ["institution.foreign-owner"]
    assert await world.transactions() == []
    results = (await world.results())["results"]
    assert [r for r in results if r["body"]["executionState"] == "RESOLVED"] == []


async def test_the_executor_creates_its_institutions_owned_by_its_subject_and_writes(
        strict_world, temporal_env):
    world = await strict_world(m2m_subject=SUBJECT)
    await claim_institutions(world.sessions, world.settings, world.http)
    (institution,) = await stored(world, SisbajudInstitution)
    assert institution.owner_subject == SUBJECT
    await world.account("@own-2", "100")
    row = await _run(world, temporal_env.client)
    assert row.reason_code == "BLOCKED_TOTAL"
    assert len(await world.transactions()) == 1
    # Every Midaz and Mensageria call of the order and the tick rode on one token each.
    assert (world.midaz_app.state.oauth.requests,
            world.mensageria_app.state.oauth.requests) == (1, 1)


async def test_midaz_is_not_asked_who_owns_the_ledger(strict_world, temporal_env):
    world = await strict_world(m2m_subject=SUBJECT)
    await world.account("@own-3", "100")
    seen: list[str] = []
    world.http.event_hooks["request"].append(lambda r: _note(seen, r))
    row = await _run(world, temporal_env.client)
    assert row.reason_code == "BLOCKED_TOTAL"
    ledger = f"/v1/organizations/{world.ledger.organization_id}/ledgers/{world.ledger.ledger_id}"
    assert f"GET {ledger}" not in seen  # no read the seed does not grant


async def _note(seen: list[str], request) -> None:
    seen.append(f"{request.method} {request.url.path}")
