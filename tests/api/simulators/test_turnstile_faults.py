"""Turnstile simulator: injected 5xx, stalls, latency, session expiry and reset."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from services.simulators.turnstile import TurnstileSimSettings, create_app
from services.simulators.turnstile.testing import SimClient, serve

ANA = {"object": "users", "values": [{"registration": "G-1", "name": "Ana"}]}
LOAD = {"object": "users"}


@pytest.fixture
async def app():
    app = create_app(TurnstileSimSettings())
    yield app
    await app.state.device.monitor.aclose()


@pytest.fixture
async def dev(app):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://turnstile") as http:
        sim = SimClient(http)
        await sim.login()
        yield sim


async def faults(dev: SimClient, **knobs) -> dict:
    response = await dev.http.post("/_sim/faults", json=knobs)
    response.raise_for_status()
    return response.json()


async def users(dev: SimClient) -> list[dict]:
    return (await dev.ok("load_objects", LOAD))["users"]


@pytest.mark.asyncio
async def test_error_before_leaves_nothing_written_and_is_used_up(dev):
    await faults(dev, error_count=1, error_status=503)
    failed = await dev.call("create_objects", ANA)
    assert (failed.status_code, failed.json()) == (503, {"error": "simulated fault"})
    assert await users(dev) == []
    assert (await dev.call("create_objects", ANA)).status_code == 200


@pytest.mark.asyncio
async def test_error_after_writes_but_loses_the_reply(dev):
    await faults(dev, error_count=1, when="after")
    assert (await dev.call("create_objects", ANA)).status_code == 500
    assert [u["registration"] for u in await users(dev)] == ["G-1"]
    # The blind retry a client might make now collides with its own earlier write.
    assert (await dev.call("create_objects", ANA)).status_code == 400


@pytest.mark.asyncio
async def test_faults_hit_only_the_named_commands_and_spare_login(dev):
    await faults(dev, error_count=-1, commands=["destroy_objects"])
    assert (await dev.call("load_objects", LOAD)).status_code == 200
    destroy = {"object": "users", "where": {"users": {"id": 1}}}
    for _ in range(3):
        assert (await dev.call("destroy_objects", destroy)).status_code == 500
    await dev.http.delete("/_sim/faults")
    assert (await dev.call("destroy_objects", destroy)).status_code == 200
    await faults(dev, error_count=-1)
    assert (await dev.call("load_objects", LOAD)).status_code == 500
    assert isinstance(await dev.login(), str)


@pytest.mark.asyncio
async def test_latency_slows_every_hit_command(dev):
    await faults(dev, latency_seconds=0.3)
    started = time.monotonic()
    assert (await dev.call("load_objects", LOAD)).status_code == 200
    assert time.monotonic() - started >= 0.3


@pytest.mark.asyncio
async def test_stall_times_the_client_out_with_or_without_the_write(app):
    # Only the stalled calls get the short timeout: on a loaded machine a login or a read
    # can take longer than 0.2 s, and timing those out was this test's flake.
    async with serve(app) as base, httpx.AsyncClient(base_url=base, timeout=10) as http:
        dev = SimClient(http)
        await dev.login()
        await faults(dev, timeout_count=1, timeout_seconds=0.6, when="before")
        with pytest.raises(httpx.ReadTimeout):
            await dev.call("create_objects", ANA, timeout=0.2)
        await asyncio.sleep(0.7)
        assert await users(dev) == []
        await faults(dev, timeout_count=1, timeout_seconds=0.6, when="after")
        with pytest.raises(httpx.ReadTimeout):
            await dev.call("create_objects", ANA, timeout=0.2)
        assert [u["registration"] for u in await users(dev)] == ["G-1"]
        await asyncio.sleep(0.7)


@pytest.mark.asyncio
async def test_expire_sessions_forces_a_new_login(dev):
    result = await faults(dev, expire_sessions=True)
    assert result["sessions_expired"] == 1
    assert (await dev.call("load_objects", LOAD)).json() == {"error": "Invalid session"}
    await dev.login()
    assert (await dev.call("load_objects", LOAD)).status_code == 200


@pytest.mark.asyncio
async def test_sessions_expire_after_the_idle_ttl(dev):
    await faults(dev, session_ttl_seconds=60)
    await dev.login()
    for _ in range(3):
        await dev.http.post("/_sim/clock", json={"advance": 40})
        assert (await dev.call("load_objects", LOAD)).status_code == 200
    await dev.http.post("/_sim/clock", json={"advance": 61})
    assert (await dev.call("load_objects", LOAD)).status_code == 401


@pytest.mark.asyncio
async def test_reset_restores_the_factory_device(dev):
    await dev.ok("create_objects", ANA)
    await faults(dev, error_count=-1, commands=["load_objects"])
    await dev.http.post("/_sim/reset")
    assert (await dev.call("load_objects", LOAD)).status_code == 401
    await dev.login()
    assert await users(dev) == []
    rules = (await dev.ok("load_objects", {"object": "access_rules"}))["access_rules"]
    assert [(r["id"], r["type"]) for r in rules] == [(1, 1)]
