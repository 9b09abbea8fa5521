"""Staff's "Desfazer" on the board: one step back, versioned, audited, with its credential."""

from __future__ import annotations

from activities.pickup.board import confirm_pickup
from activities.pickup.contracts.board import ArrivalStatus, TimerKind, timer_workflow_id
from activities.pickup.models import Arrival
from shared.db.models import utcnow


async def _ready(api) -> dict:
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    student = await api.ok("POST", "/api/pickup/students",
                           json={"schoolId": school["id"], "name": "Ana",
                                 "cardValue": 7_000_001})
    sid = student["id"]
    await api.ok("POST", f"/api/pickup/students/{sid}/arrival")
    return await api.ok("POST", f"/api/pickup/students/{sid}/ready", json={"version": 1})


async def _ledger(api) -> list[tuple[str, str]]:
    entries = (await api.ok("GET", "/api/pickup/ledger"))["items"]
    return [(e["command"], e["idempotencyKey"]) for e in entries]


async def test_undo_ready_revokes_the_grant_and_reopens_the_arrival(pickup_api):
    api = pickup_api
    ready = await _ready(api)
    sid = ready["id"]
    back = await api.ok("POST", f"/api/pickup/students/{sid}/undo", json={"version": 2})
    assert (back["state"], back["version"], back["stateReason"]) == ("AWAITING", 3, "desfeito")
    assert await _ledger(api) == [("grant", f"grant:student:{sid}:2"),
                                  ("revoke", f"revoke:student:{sid}:3")]
    [arrival] = await api.seed.all(Arrival)
    # Open again under its own deadline: its timer (or the sweep) still closes it.
    assert (arrival.status, arrival.closed_at) == (ArrivalStatus.OPEN, None)
    trail = (await api.ok("GET", "/api/pickup/audit"))["items"]
    assert [(a["action"], a["entity"]) for a in trail][:2] == [
        ("ready-undone", "student"), ("arrival-reopened", "arrival")]
    undone = trail[0]
    assert (undone["fromState"], undone["toState"], undone["details"]) == (
        "READY", "AWAITING", {"version": 3, "origin": "operator"})
    # The next step is "Pronto" again, with the new version.
    again = await api.ok("POST", f"/api/pickup/students/{sid}/ready", json={"version": 3})
    assert (again["state"], again["version"]) == ("READY", 4)


async def test_undo_an_operator_pickup_grants_again_with_a_new_ready_timer(pickup_api,
                                                                          temporal_env):
    api = pickup_api
    sid = (await _ready(api))["id"]
    await api.ok("POST", f"/api/pickup/students/{sid}/pickup", json={"version": 2})
    back = await api.ok("POST", f"/api/pickup/students/{sid}/undo", json={"version": 3})
    assert (back["state"], back["version"]) == ("READY", 4)
    assert [c for c, _ in await _ledger(api)] == ["grant", "revoke", "grant"]
    assert (await _ledger(api))[-1] == ("grant", f"grant:student:{sid}:4")
    trail = await api.ok("GET", "/api/pickup/audit", params={"entity": "student",
                                                              "entity_id": sid})
    assert trail["items"][0]["action"] == "pickup-undone"
    client = temporal_env.client
    for version in (2, 4):
        timer = client.get_workflow_handle(timer_workflow_id(TimerKind.READY, sid, version))
        assert (await timer.describe()).status.name == "RUNNING"
        await timer.terminate("test over")


async def test_undo_is_versioned_and_only_where_the_machine_allows(pickup_api):
    api = pickup_api
    ready = await _ready(api)
    sid = ready["id"]
    stale = await api.http.post(f"/api/pickup/students/{sid}/undo", json={"version": 1})
    assert (stale.status_code, stale.json()["code"]) == (409, "pickup.version-conflict")
    missing = await api.http.post("/api/pickup/students/9999/undo", json={"version": 0})
    assert (missing.status_code, missing.json()["code"]) == (404, "resource.not-found")
    # The turnstile saw the student leave: that exit can't be undone from the board.
    async with api.seed.sessions() as session, session.begin():
        await confirm_pickup(session, student_id=sid, version=2, at=utcnow(),
                             actor="turnstile", origin="turnstile")
    final = await api.http.post(f"/api/pickup/students/{sid}/undo", json={"version": 3})
    assert (final.status_code, final.json()["code"]) == (409, "pickup.invalid-transition")
    other = await api.ok("POST", "/api/pickup/students",
                         json={"schoolId": ready["schoolId"], "name": "Bia"})
    at_school = await api.http.post(f"/api/pickup/students/{other['id']}/undo",
                                    json={"version": 0})
    assert (at_school.status_code, at_school.json()["code"]) == (409, "pickup.invalid-transition")
    assert [c for c, _ in await _ledger(api)] == ["grant", "revoke"]
