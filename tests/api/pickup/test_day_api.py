"""Closing the school day by hand, and reading the audit of a day in the school's zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from activities.pickup.contracts.board import DAY_START_REASON
from activities.pickup.models import AuditEntry, BoardEvent
from activities.pickup.school_day import school_day_of
from shared.db.models import utcnow
from tests.support.pickup import API_KEY

CLOSE = "/api/pickup/schools/{}/day/close"


async def _school_with_student(api, **school) -> tuple[dict, dict]:
    created = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola", **school})
    student = await api.ok("POST", "/api/pickup/students",
                           json={"schoolId": created["id"], "name": "Ana",
                                 "cardValue": 7_000_001})
    return created, student


async def _to_ready(api, student_id: int) -> dict:
    waiting = await api.ok("POST", f"/api/pickup/students/{student_id}/arrival")
    return await api.ok("POST", f"/api/pickup/students/{student_id}/ready",
                        json={"version": waiting["version"]})


async def test_a_student_picked_up_today_can_arrive_again_once_the_day_is_closed(pickup_api):
    api = pickup_api
    school, student = await _school_with_student(api)
    ready = await _to_ready(api, student["id"])
    picked = await api.ok("POST", f"/api/pickup/students/{student['id']}/pickup",
                          json={"version": ready["version"]})
    stuck = await api.http.post(f"/api/pickup/students/{student['id']}/arrival")
    assert (stuck.status_code, stuck.json()["code"]) == (409, "pickup.invalid-transition")

    before = school_day_of(utcnow(), "America/Sao_Paulo", "00:00").isoformat()
    closed = await api.ok("POST", CLOSE.format(school["id"]))

    today = closed["day"]
    assert today in {before, school_day_of(utcnow(), "America/Sao_Paulo", "00:00").isoformat()}
    assert closed == {"schoolId": school["id"], "day": today, "closed": True,
                      "studentsReset": 1, "grantsRevoked": 0, "arrivalsClosed": 0,
                      "detail": f"Day {today} closed."}
    fresh = await api.ok("GET", f"/api/pickup/students/{student['id']}")
    assert (fresh["state"], fresh["stateReason"], fresh["version"]) == (
        "AT_SCHOOL", DAY_START_REASON, picked["version"] + 1)
    again = await api.ok("POST", f"/api/pickup/students/{student['id']}/arrival")
    assert again["state"] == "AWAITING"


async def test_closing_revokes_ready_grants_once_and_a_second_close_says_nothing_changed(
        pickup_api):
    api = pickup_api
    school, student = await _school_with_student(api)
    ready = await _to_ready(api, student["id"])

    first = await api.ok("POST", CLOSE.format(school["id"]))
    assert (first["closed"], first["studentsReset"], first["grantsRevoked"]) == (True, 1, 1)
    now = await api.ok("GET", f"/api/pickup/students/{student['id']}")
    assert (now["state"], now["version"]) == ("AT_SCHOOL", ready["version"] + 1)
    ledger = await api.ok("GET", "/api/pickup/ledger", params={"controller": school["id"]})
    revokes = [e for e in ledger["items"] if e["command"] == "revoke"]
    assert [(e["subjectId"], e["idempotencyKey"]) for e in revokes] == [
        (student["id"], f"revoke:student:{student['id']}:{now['version']}")]
    events = await api.seed.count(BoardEvent, BoardEvent.reason == DAY_START_REASON)
    audits = await api.seed.count(AuditEntry)

    second = await api.ok("POST", CLOSE.format(school["id"]))
    assert (second["closed"], second["studentsReset"], second["grantsRevoked"]) == \
        (False, 0, 0)
    assert "already closed; nothing changed" in second["detail"]
    assert (await api.ok("GET", f"/api/pickup/students/{student['id']}"))["version"] == \
        now["version"]
    assert await api.seed.count(BoardEvent, BoardEvent.reason == DAY_START_REASON) == events
    assert await api.seed.count(AuditEntry) == audits


async def test_closing_the_day_needs_the_api_key_and_an_existing_school(pickup_api):
    api = pickup_api
    school, _ = await _school_with_student(api)
    missing = await api.http.post(CLOSE.format(school["id"]), headers={"X-API-Key": ""})
    assert missing.status_code == 401
    del api.http.headers["X-API-Key"]
    without = await api.http.post(CLOSE.format(school["id"]))
    assert (without.status_code, without.json()["code"]) == (401, "auth.missing-key")
    wrong = await api.http.post(CLOSE.format(school["id"]), headers={"X-API-Key": "wrong"})
    assert (wrong.status_code, wrong.json()["code"]) == (401, "auth.invalid-key")
    assert await api.seed.count(AuditEntry, AuditEntry.action == "day-started") == 0
    unknown = await api.http.post(CLOSE.format(999_999), headers={"X-API-Key": API_KEY})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "resource.not-found")


async def test_the_audit_of_a_day_is_sliced_in_the_schools_own_zone(pickup_api):
    api = pickup_api
    _, paulista = await _school_with_student(api)
    manaus, amazonense = await _school_with_student(api, timeZone="America/Manaus")
    assert (manaus["timeZone"], manaus["dayStart"]) == ("America/Manaus", "00:00")
    # 03:59 UTC on 5 March is 23:59 on the 4th in Manaus but 00:59 on the 5th in São Paulo.
    late, midnight = (datetime(2030, 3, 5, 3, 59, tzinfo=UTC),
                      datetime(2030, 3, 5, 4, 0, tzinfo=UTC))
    for student, school_id in ((paulista, paulista["schoolId"]),
                               (amazonense, amazonense["schoolId"])):
        await api.seed.add(*[AuditEntry(at=at, school_id=school_id, entity="student",
                                        entity_id=student["id"], action=f"test-{at.hour}",
                                        actor="test") for at in (late, midnight)])

    async def actions(**params) -> list[str]:
        page = await api.ok("GET", "/api/pickup/audit", params=params)
        return [row["action"] for row in page["items"]]

    assert await actions(student_id=amazonense["id"], day="2030-03-04") == ["test-3"]
    assert await actions(student_id=amazonense["id"], day="2030-03-05") == ["test-4"]
    assert await actions(student_id=paulista["id"], day="2030-03-05") == ["test-4", "test-3"]
    assert await actions(student_id=paulista["id"], day="2030-03-04") == []
    assert await actions(school_id=manaus["id"], day="2030-03-05") == ["test-4"]

    # Today's close is in today's audit of the student, not in another day's.
    today = date.fromisoformat((await api.ok("POST", CLOSE.format(manaus["id"])))["day"])
    assert await actions(student_id=amazonense["id"], day=today.isoformat()) == ["day-started",
                                                                           "created"]
    yesterday = (today - timedelta(days=1)).isoformat()
    assert "day-started" not in await actions(student_id=amazonense["id"], day=yesterday)

    refused = await api.http.get("/api/pickup/audit", params={"day": "2030-03-05"})
    assert (refused.status_code, refused.json()["code"]) == (422, "request.invalid")
    bad_zone = await api.http.post("/api/pickup/schools",
                                   json={"name": "X", "timeZone": "Mars/Olympus"})
    assert (bad_zone.status_code, bad_zone.json()["code"]) == (422, "request.invalid")
