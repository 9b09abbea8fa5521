"""Accounting routes from Systemplane (PostgreSQL `systemplane_entries`, LISTEN
`systemplane_changes`): read there, hot-reloaded, a missing document defers the write, and the
preflight asks Midaz for each route id."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import asyncpg
import pytest
import pytest_asyncio
from pydantic import SecretStr

from activities.sisbajud import systemplane as systemplane_module
from activities.sisbajud.contracts.orders import OrderState
from activities.sisbajud.models import SisbajudRoutingDocument, SisbajudWrite
from activities.sisbajud.operator import SisbajudOperations
from activities.sisbajud.routing import LEDGER_BINDINGS, ORGANIZATIONS, Preflight
from activities.sisbajud.store import record_notice
from activities.sisbajud.systemplane import (
    SystemplaneDocuments,
    SystemplaneUnavailable,
    asyncpg_dsn,
    documents_for,
)
from shared.temporal import TemporalHandle
from tests.support.sisbajud import LEDGER, ORG, new_order_id, stored
from tests.support.systemplane import delete, put, tenant_database

NAMESPACE = "sisbajud"
ON_SQLITE = pytest.mark.parametrize("backend", ["sqlite"])  # the executor's own store


@pytest_asyncio.fixture
async def systemplane(postgres_server):
    """A tenant's Systemplane database on the test PostgreSQL server."""
    if postgres_server is None:
        pytest.skip("PostgreSQL tier skipped: no PostgreSQL binaries found")
    async with tenant_database(postgres_server.admin_url) as url:
        yield url


async def _never() -> Any:
    raise AssertionError("the routing documents never ask Temporal")


_NO_TEMPORAL = TemporalHandle(_never)


def _face(world) -> SisbajudOperations:
    """The face on the world's store and simulators (its preflight asks the world's Midaz)."""
    return SisbajudOperations(world.settings, world.sessions, _NO_TEMPORAL, http=world.http)


async def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def test_documents_come_from_systemplane_entries_and_reload_on_its_feed(systemplane):
    organizations = {"organizations": [{"organizationId": ORG}]}
    await put(systemplane, NAMESPACE, ORGANIZATIONS, organizations)
    await put(systemplane, "another-service", LEDGER_BINDINGS, {"bindings": []})
    reader = SystemplaneDocuments(systemplane, NAMESPACE)
    try:
        assert await reader.documents() == {ORGANIZATIONS: organizations}
        await _until(lambda: reader.live)
        off = {"organizations": [{"organizationId": ORG, "enabled": False}]}
        await put(systemplane, NAMESPACE, ORGANIZATIONS, off)
        await _until(lambda: reader.reloads == 1)  # the NOTIFY, not a read per call
        assert await reader.documents() == {ORGANIZATIONS: off}
        await put(systemplane, "another-service", ORGANIZATIONS, organizations)
        await delete(systemplane, NAMESPACE, ORGANIZATIONS)
        await _until(lambda: reader.reloads == 2)
        assert await reader.documents() == {}
    finally:
        await reader.close()


async def test_an_unreachable_systemplane_is_an_error_not_empty_documents():
    reader = SystemplaneDocuments("postgresql://postgres@127.0.0.1:1/nowhere", NAMESPACE)
    try:
        with pytest.raises(SystemplaneUnavailable):
            await reader.documents()
    finally:
        await reader.close()


async def _routes(world, source_type: str = "source") -> dict[str, str]:
    """An operation route per side and a transaction route holding both, in the simulator."""
    ids = {}
    for field, kind in (("sourceRouteId", source_type), ("destinationRouteId", "destination")):
        response = await world.midaz.post(f"{world.ledger.base}/operation-routes", json={
            "title": field, "operationType": kind})
        assert response.status_code == 201, response.text
        ids[field] = response.json()["id"]
    response = await world.midaz.post(f"{world.ledger.base}/transaction-routes", json={
        "title": "sisbajud", "operationRoutes": list(ids.values())})
    assert response.status_code == 201, response.text
    return {"transactionRouteId": response.json()["id"], **ids}


@ON_SQLITE
async def test_a_missing_document_defers_the_write_until_systemplane_has_it(
        make_world, temporal_env, systemplane):
    world = await make_world(heartbeat_every_seconds=60, systemplane_enabled=True,
                             systemplane_dsn=systemplane)
    client, order_id = temporal_env.client, new_order_id()
    await world.account("@routed", "100")
    await world.order(order_id, amount="25")
    async with world.worker(client):
        handle = await world.hold(client, order_id, "DEFERRED")
        assert await world.transactions() == []  # never sent without routes
        (write,) = await stored(world, SisbajudWrite, order_id=order_id)
        assert (write.state, write.last_code) == ("DEFERRED", "routing.document-missing")
        routes = await _routes(world)
        await put(systemplane, NAMESPACE, ORGANIZATIONS,
                  {"organizations": [{"organizationId": ORG}]})
        await put(systemplane, NAMESPACE, LEDGER_BINDINGS, {"bindings": [
            {"organizationId": ORG, "ledgerId": LEDGER, "block": routes}]})
        async with world.sessions() as session:  # the Hub delivers the notice again
            await record_notice(session, webhook_id=f"again-{order_id}", order_id=order_id,
                                revision=1, parked_reason=None, body=b"{}", skew_s=0,
                                skewed=False, secret_index=0)
        await world.tick(client)
        run = await handle.result()
    assert run.last_state == OrderState.RESOLVED
    (tx,) = await world.transactions()
    assert tx["routeId"] == routes["transactionRouteId"]


@ON_SQLITE
async def test_the_preflight_asks_midaz_for_each_route_id(make_world, systemplane):
    world = await make_world(systemplane_enabled=True, systemplane_dsn=systemplane)
    good, wrong_side = await _routes(world), await _routes(world, source_type="destination")
    unknown = "0190f000-0000-7000-8000-00000000dead"
    await put(systemplane, NAMESPACE, ORGANIZATIONS, {"organizations": [{"organizationId": ORG}]})

    async def report(block: dict, unblock: dict) -> Preflight:
        bindings = {"bindings": [
            {"organizationId": ORG, "ledgerId": LEDGER, "block": block, "unblock": unblock}]}
        await put(systemplane, NAMESPACE, LEDGER_BINDINGS, bindings)
        reader = documents_for(systemplane, NAMESPACE)  # the preflight's (this loop's) reader
        async with asyncio.timeout(10):  # hot reload: the change arrives on the feed
            while (await reader.documents()).get(LEDGER_BINDINGS) != bindings:
                await asyncio.sleep(0.02)
        return await _face(world).routing.preflight()

    bad = await report({**good, "transactionRouteId": unknown}, wrong_side)
    assert bad.problems
    assert sorted((p["code"], p["action"]) for p in bad.problems) == [
        ("routing.route-type-mismatch", "unblock"), ("routing.route-unknown", "block")]
    assert next(p for p in bad.problems if p["code"] == "routing.route-unknown")[
        "routeId"] == unknown
    loose = (await world.midaz.post(f"{world.ledger.base}/operation-routes", json={
        "title": "loose", "operationType": "source"})).json()["id"]
    mixed = await report(good, {**good, "sourceRouteId": loose})
    assert {p["code"] for p in mixed.problems} == {"routing.route-not-in-transaction-route"}
    fine = await report(good, good)
    assert fine.problems == []


@ON_SQLITE
async def test_the_admin_api_writes_the_document_into_systemplane(world, systemplane):
    sis = world.settings.sisbajud.model_copy(update={"systemplane_dsn": SecretStr(systemplane)})
    settings = world.settings.model_copy(update={"sisbajud": sis})
    document = {"organizations": [{"organizationId": ORG, "enabled": True}]}
    routing = SisbajudOperations(settings, world.sessions, _NO_TEMPORAL).routing
    first = await routing.put(ORGANIZATIONS, document, "alice")
    second = await routing.put(ORGANIZATIONS, document, "bob")
    assert (first.updated_by, second.updated_by) == ("alice", "bob")
    assert second.version == first.version  # the same value keeps its revision
    assert await routing.get(ORGANIZATIONS) == second
    assert await stored(world, SisbajudRoutingDocument) == []  # nothing kept locally
    reader = SystemplaneDocuments(systemplane, NAMESPACE)
    try:
        assert await reader.documents() == {ORGANIZATIONS: document}
    finally:
        await reader.close()


async def test_a_change_made_while_the_feed_was_down_is_read_on_reconnect(systemplane,
                                                                           monkeypatch):
    monkeypatch.setattr(systemplane_module, "RECONNECT_SECONDS", 2.0)  # the change lands first
    await put(systemplane, NAMESPACE, ORGANIZATIONS, {"organizations": []})
    reader = SystemplaneDocuments(systemplane, NAMESPACE)
    try:
        await reader.documents()
        await _until(lambda: reader.live)
        admin = await asyncpg.connect(asyncpg_dsn(systemplane))
        try:  # the feed's connection dies under it
            await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        finally:
            await admin.close()
        await _until(lambda: not reader.live)
        changed = {"organizations": [{"organizationId": ORG}]}
        await put(systemplane, NAMESPACE, ORGANIZATIONS, changed)  # no feed hears this NOTIFY
        await _until(lambda: reader.live)
        assert reader.reloads == 0 and await reader.documents() == {ORGANIZATIONS: changed}
    finally:
        await reader.close()
