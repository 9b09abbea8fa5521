"""The pickup REST API: auth per audience, the board's transitions, links, authorizations."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlmodel import update

from activities.pickup.contracts.board import TimerKind, timer_workflow_id
from activities.pickup.models import GuardianLink
from shared.db.models import utcnow
from tests.support.pickup import MONITOR_TOKEN


async def _family(api, *, link: dict | None = None) -> tuple[dict, dict, dict, str]:
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    student = await api.ok("POST", "/api/pickup/students",
                           json={"schoolId": school["id"], "name": "Ana",
                                 "cardValue": 7_000_001})
    guardian = await api.ok("POST", "/api/pickup/guardians", json={"name": "Maria"})
    await api.ok("POST", "/api/pickup/links", json={
        "studentId": student["id"], "guardianId": guardian["id"],
        **(link or {"kind": "permanent"})})
    token = (await api.ok("POST", f"/api/pickup/guardians/{guardian['id']}/tokens",
                          json={}))["token"]
    return school, student, guardian, token


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_each_audience_authenticates_its_own_way(pickup_api):
    api = pickup_api
    _, _, guardian, token = await _family(api)
    plain = {"X-API-Key": ""}

    refused = await api.http.get("/api/pickup/schools/1", headers={"X-API-Key": "wrong"})
    assert (refused.status_code, refused.json()["code"]) == (401, "auth.invalid-key")
    # Guardian routes skip the API key check but demand a live access token.
    missing = await api.http.get("/api/pickup/guardian/students")
    assert (missing.status_code, missing.json()["code"]) == (401, "pickup.token-missing")
    bogus = await api.http.get("/api/pickup/guardian/students", headers=bearer("nope") | plain)
    assert (bogus.status_code, bogus.json()["code"]) == (401, "pickup.token-invalid")
    expired = (await api.ok("POST", f"/api/pickup/guardians/{guardian['id']}/tokens",
                            json={"ttlHours": 0.0001}))["token"]
    await asyncio.sleep(0.5)
    late = await api.http.get("/api/pickup/guardian/students", headers=bearer(expired))
    assert (late.status_code, late.json()["code"]) == (401, "pickup.token-invalid")
    mine = await api.http.get("/api/pickup/guardian/students", headers=bearer(token) | plain)
    assert mine.status_code == 200 and [s["name"] for s in mine.json()["items"]] == ["Ana"]
    # The monitor route is authenticated by the token in its path, not by the API key.
    wrong = await api.http.post("/api/pickup/turnstile/monitor/1/guess/dao", json={})
    assert (wrong.status_code, wrong.json()["code"]) == (401, "pickup.monitor-unauthorized")
    right = await api.http.post(f"/api/pickup/turnstile/monitor/1/{MONITOR_TOKEN}/dao",
                                json={}, headers=plain)
    assert right.status_code == 200


async def test_expired_temporary_link_is_denied_before_any_sweep_removes_it(pickup_api):
    api = pickup_api
    until = utcnow() + timedelta(hours=1)
    _, student, _, token = await _family(api, link={"kind": "temporary",
                                                    "valid_until": until.isoformat()})
    assert len((await api.ok("GET", "/api/pickup/guardian/students",
                             headers=bearer(token)))["items"]) == 1

    # The validity ends (moved to just past, rather than waited out on a loaded machine).
    async with api.seed.sessions() as session, session.begin():
        await session.exec(update(GuardianLink).values(
            valid_until=utcnow() - timedelta(milliseconds=1)))

    assert (await api.ok("GET", "/api/pickup/guardian/students",
                         headers=bearer(token)))["items"] == []
    denied = await api.http.post("/api/pickup/guardian/arrivals", headers=bearer(token),
                                 json={"studentIds": [student["id"]]})
    assert (denied.status_code, denied.json()["code"]) == (403, "pickup.access-denied")
    assert await api.seed.count(GuardianLink) == 1  # the dead row is still there
    board = await api.ok("GET", f"/api/pickup/schools/{student['schoolId']}/board")
    assert board["students"][0]["state"] == "AT_SCHOOL"


async def test_board_transitions_are_conditional_on_the_version(pickup_api, temporal_env):
    api = pickup_api
    _, student, _, token = await _family(api)
    sid = student["id"]
    [awaiting] = await api.ok("POST", "/api/pickup/guardian/arrivals", headers=bearer(token),
                              json={"studentIds": [sid]})
    assert (awaiting["state"], awaiting["version"]) == ("AWAITING", 1)
    ready = await api.ok("POST", f"/api/pickup/students/{sid}/ready", json={"version": 1})
    assert (ready["state"], ready["version"]) == ("READY", 2)

    stale = await api.http.post(f"/api/pickup/students/{sid}/pickup", json={"version": 1})
    assert (stale.status_code, stale.json()["code"]) == (409, "pickup.version-conflict")
    wrong = await api.http.post(f"/api/pickup/students/{sid}/ready", json={"version": 2})
    assert (wrong.status_code, wrong.json()["code"]) == (409, "pickup.invalid-transition")
    done = await api.ok("POST", f"/api/pickup/students/{sid}/pickup", json={"version": 2})
    assert (done["state"], done["version"]) == ("PICKED_UP", 3)

    ledger = await api.ok("GET", "/api/pickup/ledger", params={"status": "pending"})
    assert [(e["command"], e["registration"]) for e in ledger["items"]] == \
        [("grant", f"student-{sid}"), ("revoke", f"student-{sid}")]
    assert ledger["pending"] == 2
    trail = await api.ok("GET", "/api/pickup/audit", params={"entity": "student",
                                                              "entity_id": sid})
    assert [a["action"] for a in trail["items"]] == ["picked-up", "ready", "arrival-signalled",
                                                      "created"]
    timer = temporal_env.client.get_workflow_handle(timer_workflow_id(TimerKind.READY, sid, 2))
    assert (await timer.describe()).status.name == "RUNNING"
    await timer.terminate("test over")


async def test_authorized_person_approval_schedules_a_grant(pickup_api):
    api = pickup_api
    _, student, _, _ = await _family(api)
    bad = await api.http.post("/api/pickup/authorized-persons", json={
        "studentId": student["id"], "name": "Tia", "kind": "permanent",
        "validUntil": (utcnow() + timedelta(days=1)).isoformat()})
    assert (bad.status_code, bad.json()["code"]) == (422, "pickup.invalid-validity")
    person = await api.ok("POST", "/api/pickup/authorized-persons", json={
        "studentId": student["id"], "name": "Tia", "kind": "permanent"})
    approved = await api.ok("POST", f"/api/pickup/authorized-persons/{person['id']}/approve",
                            json={"version": 0})
    assert (approved["status"], approved["syncStatus"]) == ("approved", "pending")
    again = await api.http.post(f"/api/pickup/authorized-persons/{person['id']}/approve",
                                json={"version": 0})
    assert (again.status_code, again.json()["code"]) == (409, "pickup.status-conflict")
    ledger = await api.ok("GET", "/api/pickup/ledger")
    assert [(e["command"], e["endTime"]) for e in ledger["items"]] == [("grant", 0)]
