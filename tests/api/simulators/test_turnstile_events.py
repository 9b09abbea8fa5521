"""Turnstile simulator: the Monitor pushes access logs and turns to a real HTTP receiver."""

from __future__ import annotations

from contextlib import asynccontextmanager

import httpx
import pytest

from services.simulators.turnstile import TurnstileSimSettings, create_app
from services.simulators.turnstile.testing import EventReceiver, SimClient, serve

CARD = 77


@asynccontextmanager
async def device(monitor_url: str | None, **settings):
    app = create_app(
        TurnstileSimSettings(monitor_url=monitor_url, push_retry_delay_seconds=0.05, **settings)
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://turnstile") as http:
        sim = SimClient(http)
        await sim.login()
        try:
            yield sim
        finally:
            await app.state.device.monitor.aclose()


async def enrol(dev: SimClient) -> int:
    (uid,) = (
        await dev.ok(
            "create_objects",
            {"object": "users", "values": [{"registration": "G-1", "name": "Ana"}]},
        )
    )["ids"]
    await dev.ok("create_objects", {"object": "cards", "values": [{"value": CARD, "user_id": uid}]})
    await dev.ok(
        "create_objects",
        {"object": "user_access_rules", "values": [{"user_id": uid, "access_rule_id": 1}]},
    )
    return uid


async def flushed(dev: SimClient) -> list[dict]:
    response = await dev.http.post("/_sim/deliveries/flush", params={"timeout": 5})
    response.raise_for_status()
    return response.json()


@pytest.mark.asyncio
async def test_a_passage_reaches_the_receiver_as_dao_then_catra_event():
    receiver = EventReceiver()
    async with serve(receiver.app) as base, device(f"{base}/api/notifications") as dev:
        uid = await enrol(dev)
        passed = await dev.present(card_value=CARD)
        await receiver.wait_for(2)
    (dao_path, dao), (catra_path, catra) = receiver.received
    assert (dao_path, catra_path) == ("api/notifications/dao", "api/notifications/catra_event")
    assert dao["device_id"] == 478435
    (change,) = dao["object_changes"]
    assert (change["object"], change["type"]) == ("access_logs", "inserted")
    values = change["values"]
    assert (values["event"], values["user_id"], values["card_value"]) == ("7", str(uid), str(CARD))
    assert values["id"] == str(passed["access_log_id"])
    assert catra["event"]["type"] == "TURN_RIGHT"
    assert catra["access_event_id"] == passed["access_event_id"]


@pytest.mark.asyncio
async def test_denials_are_pushed_too():
    receiver = EventReceiver()
    async with serve(receiver.app) as base, device(base) as dev:
        await dev.present(card_value=CARD)
        await receiver.wait_for(1)
    assert [b["object_changes"][0]["values"]["event"] for b in receiver.of("dao")] == ["3"]
    assert receiver.of("catra_event") == []


@pytest.mark.asyncio
async def test_set_configuration_points_the_monitor_at_a_server():
    receiver = EventReceiver()
    async with serve(receiver.app) as base, device(None) as dev:
        await dev.present(card_value=CARD)
        assert await flushed(dev) == []
        host, port = base.removeprefix("http://").split(":")
        monitor = {"hostname": host, "port": port, "path": "/hooks/controlid/"}
        await dev.ok("set_configuration", {"monitor": monitor})
        await dev.present(card_value=CARD)
        await receiver.wait_for(1)
    assert [path for path, _ in receiver.received] == ["hooks/controlid/dao"]


@pytest.mark.asyncio
async def test_failed_pushes_are_retried_then_given_up():
    receiver = EventReceiver(fail_first=2)
    async with serve(receiver.app) as base, device(base, push_retries=2) as dev:
        await dev.present(card_value=CARD)
        (delivery,) = await flushed(dev)
        assert (delivery["status"], delivery["attempts"]) == ("delivered", 3)
        receiver.fail_first, receiver.refused = 10, 0
        await dev.present(card_value=CARD)
        deliveries = await flushed(dev)
    assert (deliveries[-1]["status"], deliveries[-1]["attempts"]) == ("failed", 3)
    assert deliveries[-1]["last_error"] == "HTTP 503"
    assert len(receiver.of("dao")) == 1


@pytest.mark.asyncio
async def test_push_faults_drop_or_repeat_notifications():
    receiver = EventReceiver()
    async with serve(receiver.app) as base, device(base) as dev:
        await dev.http.post("/_sim/faults", json={"push_drop": True})
        await dev.present(card_value=CARD)
        assert [d["status"] for d in await flushed(dev)] == ["dropped"]
        await dev.http.post("/_sim/faults", json={"push_drop": False, "push_duplicate": True})
        await dev.present(card_value=CARD)
        await flushed(dev)
    first, second = receiver.of("dao")
    assert first == second
    assert len(receiver.received) == 2
