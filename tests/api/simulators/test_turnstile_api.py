"""Turnstile simulator: login/session and the object CRUD of the Control iD API."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from services.simulators.turnstile import TurnstileSimSettings, create_app
from services.simulators.turnstile.testing import SimClient

REPO = Path(__file__).resolve().parents[3]
ANA = {"registration": "G-1", "name": "Ana"}


@pytest.fixture
async def sim():
    app = create_app(TurnstileSimSettings())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://turnstile") as http:
        yield SimClient(http)
    await app.state.device.monitor.aclose()


@pytest.fixture
async def dev(sim):
    await sim.login()
    return sim


@pytest.mark.asyncio
async def test_login_rejects_wrong_credentials_with_401(sim):
    bad = await sim.http.post("/login.fcgi", json={"login": "admin", "password": "nope"})
    assert bad.status_code == 401
    assert "error" in bad.json() and "session" not in bad.json()
    missing = await sim.http.post("/login.fcgi", json={"login": "admin"})
    assert missing.status_code == 400
    assert isinstance(await sim.login(), str)


@pytest.mark.asyncio
async def test_commands_need_a_live_session(sim):
    body = {"object": "users"}
    assert (await sim.call("load_objects", body, session=None)).status_code == 401
    assert (await sim.call("load_objects", body, session="forged")).json() == {
        "error": "Invalid session"
    }
    token = await sim.login()
    assert (await sim.call("load_objects", body)).status_code == 200
    valid = await sim.http.post("/session_is_valid.fcgi", params={"session": token})
    assert valid.json() == {"session_is_valid": True}
    await sim.ok("logout")
    assert (await sim.call("load_objects", body)).status_code == 401
    valid = await sim.http.post("/session_is_valid.fcgi", params={"session": token})
    assert valid.json() == {"session_is_valid": False}


@pytest.mark.asyncio
async def test_create_and_destroy_user_with_card(dev):
    (uid,) = (await dev.ok("create_objects", {"object": "users", "values": [ANA]}))["ids"]
    card = {"value": 4294967396, "user_id": uid}
    await dev.ok("create_objects", {"object": "cards", "values": [card]})
    users = await dev.ok("load_objects", {"object": "users", "where": {"users": {"id": uid}}})
    assert users["users"][0]["registration"] == "G-1"
    assert users["users"][0]["begin_time"] == 0 and users["users"][0]["end_time"] == 0

    where = {"users": {"registration": "G-1"}}
    assert await dev.ok("destroy_objects", {"object": "users", "where": where}) == {"changes": 1}
    # Removing the user takes its credentials with it (ON DELETE CASCADE).
    assert await dev.ok("load_objects", {"object": "cards"}) == {"cards": []}
    # Destroying what is already gone is a successful no-op: revocation can be retried.
    assert await dev.ok("destroy_objects", {"object": "users", "where": where}) == {"changes": 0}


@pytest.mark.asyncio
async def test_recreating_a_user_is_refused_and_changes_nothing(dev):
    await dev.ok("create_objects", {"object": "users", "values": [ANA]})
    again = await dev.call("create_objects", {"object": "users", "values": [ANA]})
    assert again.status_code == 400
    assert again.json() == {"error": "UNIQUE constraint failed: users.registration"}
    # A batch is all or nothing: Bia is not kept although only Ana's row clashed.
    batch = [{"registration": "G-2", "name": "Bia"}, ANA]
    assert (
        await dev.call("create_objects", {"object": "users", "values": batch})
    ).status_code == 400
    users = (await dev.ok("load_objects", {"object": "users"}))["users"]
    assert [u["registration"] for u in users] == ["G-1"]


@pytest.mark.asyncio
async def test_create_or_modify_objects_is_the_idempotent_write(dev):
    user = {"id": 42, "end_time": 1_800_000_000} | ANA
    for _ in range(2):
        body = {"object": "users", "values": [user]}
        assert await dev.ok("create_or_modify_objects", body) == {"changes": 1}
    await dev.ok("create_or_modify_objects", {"object": "users", "values": [user | {"name": "A"}]})
    users = (await dev.ok("load_objects", {"object": "users"}))["users"]
    assert [(u["id"], u["name"], u["end_time"]) for u in users] == [(42, "A", 1_800_000_000)]
    clash = [{"id": 43, "registration": "G-3", "name": "C"}, {"id": 44} | ANA]
    upsert = await dev.call("create_or_modify_objects", {"object": "users", "values": clash})
    assert upsert.status_code == 400
    assert [u["id"] for u in (await dev.ok("load_objects", {"object": "users"}))["users"]] == [42]
    link = {"user_id": 42, "access_rule_id": 1}
    for _ in range(2):
        await dev.ok("create_or_modify_objects", {"object": "user_access_rules", "values": [link]})
    links = await dev.ok("load_objects", {"object": "user_access_rules"})
    assert links == {"user_access_rules": [link]}


@pytest.mark.asyncio
async def test_links_and_cards_are_unique_and_need_their_parents(dev):
    await dev.ok("create_objects", {"object": "users", "values": [ANA | {"id": 1}]})
    card = {"object": "cards", "values": [{"value": 7, "user_id": 1}]}
    await dev.ok("create_objects", card)
    dup = await dev.call("create_objects", card)
    assert dup.json() == {"error": "UNIQUE constraint failed: cards.value"}
    orphan = await dev.call(
        "create_objects", {"object": "cards", "values": [{"value": 8, "user_id": 9}]}
    )
    assert orphan.json() == {"error": "FOREIGN KEY constraint failed"}
    link = {"object": "user_access_rules", "values": [{"user_id": 1, "access_rule_id": 1}]}
    await dev.ok("create_objects", link)
    assert (await dev.call("create_objects", link)).status_code == 400


@pytest.mark.asyncio
async def test_modify_and_destroy_filter_only_by_their_own_object(dev):
    await dev.ok(
        "create_objects",
        {"object": "users", "values": [ANA, {"registration": "G-2", "name": "Bia"}]},
    )
    body = {
        "object": "users",
        "values": {"end_time": 5},
        "where": {"users": {"registration": "G-2"}},
    }
    assert await dev.ok("modify_objects", body) == {"changes": 1}
    users = (await dev.ok("load_objects", {"object": "users", "order": ["registration"]}))["users"]
    assert [u["end_time"] for u in users] == [0, 5]
    cross = {"object": "users", "where": {"cards": {"value": 1}}}
    assert (await dev.call("destroy_objects", cross)).status_code == 400
    assert (await dev.call("load_objects", {"object": "nope"})).json() == {
        "error": "Invalid object: nope"
    }
    typo = {"object": "users", "values": [{"registration": 1, "name": "X"}]}
    assert (await dev.call("create_objects", typo)).status_code == 400


@pytest.mark.asyncio
async def test_load_objects_fields_limit_offset_and_operators(dev):
    values = [{"registration": f"G-{i}", "name": f"N{i}", "end_time": i} for i in range(5)]
    await dev.ok("create_objects", {"object": "users", "values": values})
    body = {"object": "users", "fields": ["registration"], "limit": 2, "offset": 1}
    assert await dev.ok("load_objects", body) == {
        "users": [{"registration": "G-1"}, {"registration": "G-2"}]
    }
    where = {"users": {"end_time": {">=": 3}}}
    rows = (await dev.ok("load_objects", {"object": "users", "where": where}))["users"]
    assert [r["registration"] for r in rows] == ["G-3", "G-4"]


@pytest.mark.asyncio
async def test_monitor_configuration_round_trips_as_strings(dev):
    monitor = {"hostname": "10.0.0.5", "port": "8000", "path": "api/notifications"}
    assert await dev.ok("set_configuration", {"monitor": monitor}) == {}
    got = await dev.ok("get_configuration", {"monitor": ["hostname", "port", "path"]})
    assert got == {"monitor": monitor}
    bad = await dev.call("set_configuration", {"monitor": {"port": 8000}})
    assert bad.status_code == 400


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.asyncio
async def test_main_serves_the_device_api():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.simulators.turnstile", "--port", str(port)],
        cwd=REPO,
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            for _ in range(100):
                try:
                    response = await http.post(
                        "/login.fcgi", json={"login": "admin", "password": "admin"}
                    )
                    break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            else:
                pytest.fail("simulator did not start")
        assert "session" in response.json()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
