"""Turnstile simulator: who passes, by grants, validity windows, rules and schedules."""

from __future__ import annotations

import httpx
import pytest

from services.simulators.turnstile import TurnstileSimSettings, create_app
from services.simulators.turnstile.testing import SimClient

# 2026-01-02 (a Friday) 12:00 in America/Sao_Paulo (UTC-3).
NOON = 1_767_366_000
HOUR = 3600
CARD = 1001


@pytest.fixture
async def dev():
    app = create_app(TurnstileSimSettings(), clock=lambda: NOON)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://turnstile") as http:
        sim = SimClient(http)
        await sim.login()
        yield sim
    await app.state.device.monitor.aclose()


async def enrol(dev: SimClient, *, begin: int = 0, end: int = 0, grant: bool = True) -> int:
    """A guardian with a badge, optionally linked to the factory allow rule 1."""
    user = {"registration": "G-1", "name": "Ana", "begin_time": begin, "end_time": end}
    (uid,) = (await dev.ok("create_objects", {"object": "users", "values": [user]}))["ids"]
    await dev.ok("create_objects", {"object": "cards", "values": [{"value": CARD, "user_id": uid}]})
    if grant:
        link = {"user_id": uid, "access_rule_id": 1}
        await dev.ok("create_objects", {"object": "user_access_rules", "values": [link]})
    return uid


async def advance(dev: SimClient, seconds: int) -> None:
    (await dev.http.post("/_sim/clock", json={"advance": seconds})).raise_for_status()


@pytest.mark.asyncio
async def test_granted_while_valid_and_denied_after_end_time(dev):
    uid = await enrol(dev, end=NOON + HOUR)
    passed = await dev.present(card_value=CARD)
    assert (passed["event"], passed["result"], passed["user_id"]) == (7, "granted", uid)
    assert (await dev.present(card_value=CARD, at=NOON + HOUR))["event"] == 7
    await advance(dev, HOUR + 1)
    late = await dev.present(card_value=CARD)
    assert (late["event"], late["reason"]) == (6, "after end_time")


@pytest.mark.asyncio
async def test_denied_before_begin_time(dev):
    await enrol(dev, begin=NOON + 60)
    early = await dev.present(card_value=CARD)
    assert (early["event"], early["reason"]) == (6, "before begin_time")
    assert (await dev.present(card_value=CARD, at=NOON + 60))["event"] == 7


@pytest.mark.asyncio
async def test_a_badge_without_a_grant_is_denied(dev):
    await enrol(dev, grant=False)
    assert (await dev.present(card_value=CARD))["event"] == 6
    assert (await dev.present(card_value=999))["event"] == 3


@pytest.mark.asyncio
async def test_destroying_the_user_revokes_at_once(dev):
    await enrol(dev)
    assert (await dev.present(card_value=CARD))["event"] == 7
    where = {"users": {"registration": "G-1"}}
    await dev.ok("destroy_objects", {"object": "users", "where": where})
    assert (await dev.present(card_value=CARD))["event"] == 3


@pytest.mark.asyncio
async def test_removing_the_rule_link_revokes_at_once(dev):
    uid = await enrol(dev)
    assert (await dev.present(card_value=CARD))["event"] == 7
    where = {"user_access_rules": {"user_id": uid}}
    await dev.ok("destroy_objects", {"object": "user_access_rules", "where": where})
    assert (await dev.present(card_value=CARD))["event"] == 6


@pytest.mark.asyncio
async def test_moving_end_time_to_the_past_revokes_at_once(dev):
    uid = await enrol(dev)
    body = {"object": "users", "values": {"end_time": NOON - 1}, "where": {"users": {"id": uid}}}
    await dev.ok("modify_objects", body)
    assert (await dev.present(card_value=CARD))["event"] == 6


@pytest.mark.asyncio
async def test_a_block_rule_wins_over_an_allow_rule(dev):
    uid = await enrol(dev)
    await dev.ok(
        "create_objects", {"object": "access_rules", "values": [{"id": 9, "name": "x", "type": 0}]}
    )
    for obj, link in [
        ("portal_access_rules", {"portal_id": 1, "access_rule_id": 9}),
        ("access_rule_time_zones", {"access_rule_id": 9, "time_zone_id": 1}),
        ("user_access_rules", {"user_id": uid, "access_rule_id": 9}),
    ]:
        await dev.ok("create_objects", {"object": obj, "values": [link]})
    blocked = await dev.present(card_value=CARD)
    assert (blocked["event"], blocked["reason"]) == (6, "blocked by access rule 9")


@pytest.mark.asyncio
async def test_a_group_grant_lets_members_pass(dev):
    uid = await enrol(dev, grant=False)
    await dev.ok("create_objects", {"object": "groups", "values": [{"id": 5, "name": "Saida"}]})
    await dev.ok(
        "create_objects", {"object": "user_groups", "values": [{"user_id": uid, "group_id": 5}]}
    )
    assert (await dev.present(card_value=CARD))["event"] == 6
    link = {"group_id": 5, "access_rule_id": 1}
    await dev.ok("create_objects", {"object": "group_access_rules", "values": [link]})
    assert (await dev.present(card_value=CARD))["event"] == 7


@pytest.mark.asyncio
async def test_rules_apply_only_inside_their_time_spans_and_portals(dev):
    uid = await enrol(dev, grant=False)
    span = {"time_zone_id": 2, "start": 7 * HOUR, "end": 12 * HOUR - 1, "fri": 1}
    for obj, row in [
        ("time_zones", {"id": 2, "name": "Manha"}),
        ("time_spans", span),
        ("access_rules", {"id": 2, "name": "Manha", "type": 1}),
        ("access_rule_time_zones", {"access_rule_id": 2, "time_zone_id": 2}),
        ("portal_access_rules", {"portal_id": 1, "access_rule_id": 2}),
        ("user_access_rules", {"user_id": uid, "access_rule_id": 2}),
        ("portals", {"id": 2, "name": "Portao"}),
    ]:
        await dev.ok("create_objects", {"object": obj, "values": [row]})
    assert (await dev.present(card_value=CARD, at=NOON - HOUR))["event"] == 7
    assert (await dev.present(card_value=CARD))["event"] == 6
    assert (await dev.present(card_value=CARD, at=NOON - HOUR + 86400))["event"] == 6  # Saturday
    assert (await dev.present(card_value=CARD, at=NOON - HOUR, portal_id=2))["event"] == 6


@pytest.mark.asyncio
async def test_giving_up_logs_event_13_and_every_attempt_is_logged(dev):
    uid = await enrol(dev)
    gave_up = await dev.present(card_value=CARD, turn=False)
    assert gave_up["event"] == 13
    await dev.present(card_value=CARD)
    await dev.present(card_value=404)
    logs = (await dev.ok("load_objects", {"object": "access_logs"}))["access_logs"]
    assert [(log["event"], log["user_id"]) for log in logs] == [(13, uid), (7, uid), (3, 0)]
    events = (await dev.ok("load_objects", {"object": "access_events"}))["access_events"]
    assert [e["type"] for e in events] == ["GIVE_UP", "TURN_RIGHT"]
    info = (await dev.http.get("/get_catra_info.fcgi", params={"session": dev.session})).json()
    assert (info["exit_turns"], info["total_turns"]) == (1, 1)


@pytest.mark.asyncio
async def test_remote_release_arms_one_turn_for_catra_timeout(dev):
    locked = await dev.http.post("/_sim/turn", json={"direction": "clockwise"})
    assert locked.status_code == 409
    release = {"actions": [{"action": "catra", "parameters": "allow=clockwise"}]}
    assert await dev.ok("execute_actions", release) is None
    wrong_way = await dev.http.post("/_sim/turn", json={"direction": "anticlockwise"})
    assert wrong_way.status_code == 409
    await dev.ok("execute_actions", release)
    turned = await dev.http.post("/_sim/turn", json={"direction": "clockwise"})
    assert turned.json()["event"] == 10
    assert (await dev.http.post("/_sim/turn", json={"direction": "clockwise"})).status_code == 409
    await dev.ok("execute_actions", release)
    await advance(dev, 11)
    assert (await dev.http.post("/_sim/turn", json={"direction": "clockwise"})).status_code == 409
