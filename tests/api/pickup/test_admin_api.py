"""Pickup administration: paged listings, revisioned edits, deletions, tokens, school keys."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest_asyncio
from pydantic import SecretStr
from sqlmodel import update

from activities.pickup.models import AuditEntry, AuthorizedPerson, BoardEvent, Student
from services.app import create_app
from services.app_context import ApiContext
from shared.db.engine import create_engine
from shared.temporal import TemporalHandle
from tests.api.pickup.conftest import PickupApi
from tests.support.pickup import API_KEY, Seed, pickup_settings

KEY_A = "school-one-key-0123456789"
KEY_B = "school-two-key-0123456789"
P = "/api/pickup"


@pytest_asyncio.fixture
async def admin_api(tmp_path, database_url: str) -> AsyncIterator[PickupApi]:
    """The app with school keys for schools 1 and 2, and no Temporal (kicks only log)."""
    settings = pickup_settings(tmp_path, database_url,
                               school_keys={1: SecretStr(KEY_A), 2: SecretStr(KEY_B)})
    engine = create_engine(settings.sqlalchemy_url)

    async def no_temporal():
        raise RuntimeError("no Temporal in these tests")

    context = ApiContext.build(settings, engine, api_key=API_KEY,
                         temporal=TemporalHandle(no_temporal))
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira",
                                 headers={"X-API-Key": API_KEY}) as http:
        yield PickupApi(None, http, Seed(context.sessions), context)
    await engine.dispose()


async def _school(api, name: str) -> int:
    return (await api.ok("POST", f"{P}/schools", json={"name": name}))["id"]


async def _student(api, school_id: int, name: str) -> dict:
    return await api.ok("POST", f"{P}/students", json={"schoolId": school_id, "name": name})


async def _family(api, school_id: int, name: str = "Ana") -> tuple[dict, dict, dict]:
    student = await _student(api, school_id, name)
    guardian = await api.ok("POST", f"{P}/guardians", json={"name": f"Mãe de {name}"})
    link = await api.ok("POST", f"{P}/links", json={
        "studentId": student["id"], "guardianId": guardian["id"], "kind": "permanent"})
    return student, guardian, link


def _refused(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


async def test_lists_are_paged_in_id_order_and_filtered_by_school(admin_api):
    api = admin_api
    one, two = await _school(api, "Um"), await _school(api, "Dois")
    mine = [(await _family(api, one, name))[0]["id"] for name in ("Ana", "Bia", "Caio")]
    other, _, _ = await _family(api, two, "Duda")
    await api.ok("POST", f"{P}/authorized-persons", json={
        "studentId": other["id"], "name": "Tia", "kind": "permanent"})

    first = await api.ok("GET", f"{P}/students", params={"school_id": one, "limit": 2})
    assert [s["id"] for s in first["items"]] == mine[:2] and first["nextCursor"]
    rest = await api.ok("GET", f"{P}/students", params={"school_id": one, "limit": 2,
                                                         "cursor": first["nextCursor"]})
    assert [s["id"] for s in rest["items"]] == mine[2:] and rest["nextCursor"] is None
    everyone = await api.ok("GET", f"{P}/students")
    assert [s["id"] for s in everyone["items"]] == [*mine, other["id"]]

    guardians = await api.ok("GET", f"{P}/guardians", params={"school_id": two})
    assert [g["name"] for g in guardians["items"]] == ["Mãe de Duda"]
    links = await api.ok("GET", f"{P}/links", params={"school_id": one})
    assert sorted(link["studentId"] for link in links["items"]) == mine
    persons = await api.ok("GET", f"{P}/authorized-persons", params={"school_id": one})
    assert persons["items"] == []
    persons = await api.ok("GET", f"{P}/authorized-persons", params={"school_id": two})
    assert [p["name"] for p in persons["items"]] == ["Tia"]
    bad = await api.http.get(f"{P}/students", params={"limit": 0})
    assert _refused(bad) == (422, "request.invalid")


async def test_edits_apply_only_at_the_revision_the_caller_read(admin_api):
    api = admin_api
    school = await _school(api, "Um")
    student, guardian, link = await _family(api, school)

    renamed = await api.ok("PATCH", f"{P}/students/{student['id']}",
                           json={"revision": 0, "name": "Ana Luiza", "registration": "2024-7"})
    assert (renamed["name"], renamed["registration"], renamed["revision"]) == \
        ("Ana Luiza", "2024-7", 1)
    assert renamed["version"] == student["version"]  # the board's CAS is not disturbed
    stale = await api.http.patch(f"{P}/students/{student['id']}",
                                 json={"revision": 0, "name": "Outra"})
    assert _refused(stale) == (409, "pickup.version-conflict")

    changed = await api.ok("PATCH", f"{P}/guardians/{guardian['id']}",
                           json={"revision": 0, "cpf": "529.982.247-25", "contact": "tel"})
    assert (changed["cpf"], changed["contact"], changed["revision"]) == ("52998224725", "tel", 1)
    bad_cpf = await api.http.patch(f"{P}/guardians/{guardian['id']}",
                                   json={"revision": 1, "cpf": "529.982.247-26"})
    assert _refused(bad_cpf) == (422, "request.invalid")

    undated = await api.http.patch(f"{P}/links/{link['id']}",
                                   json={"revision": 0, "kind": "temporary"})
    assert _refused(undated) == (422, "pickup.invalid-validity")
    temporary = await api.ok("PATCH", f"{P}/links/{link['id']}", json={
        "revision": 0, "kind": "temporary", "validUntil": "2030-01-01T00:00:00+00:00"})
    assert (temporary["kind"], temporary["revision"]) == ("temporary", 1)
    events = await api.seed.all(BoardEvent, BoardEvent.reason == "link-changed")
    assert [e.guardian_id for e in events] == [guardian["id"]]
    actions = {(a.entity, a.action) for a in await api.seed.all(AuditEntry)}
    assert {("student", "updated"), ("guardian", "updated"),
            ("guardian_link", "updated")} <= actions


async def test_deletions_in_use_are_refused_and_the_rest_audited(admin_api):
    api = admin_api
    school = await _school(api, "Um")
    student, guardian, link = await _family(api, school)
    person = await api.ok("POST", f"{P}/authorized-persons", json={
        "studentId": student["id"], "name": "Tia", "kind": "permanent"})
    await api.ok("POST", f"{P}/authorized-persons/{person['id']}/approve", json={"version": 0})

    for path in (f"guardians/{guardian['id']}", f"students/{student['id']}",
                 f"authorized-persons/{person['id']}"):
        refused = await api.http.delete(f"{P}/{path}")
        assert _refused(refused) == (409, "pickup.in-use"), path

    await api.ok("POST", f"{P}/authorized-persons/{person['id']}/revoke", json={"version": 1})
    # Revoked, but the controller has not confirmed it: the badge may still open the gate.
    pending = await api.http.delete(f"{P}/authorized-persons/{person['id']}")
    assert _refused(pending) == (409, "pickup.in-use")
    async with api.seed.sessions() as session, session.begin():
        await session.exec(update(AuthorizedPerson).values(sync_status="synced"))
    assert (await api.http.delete(f"{P}/authorized-persons/{person['id']}")).status_code == 204

    assert (await api.http.delete(f"{P}/links/{link['id']}")).status_code == 204
    removed = await api.seed.all(BoardEvent, BoardEvent.reason == "link-removed")
    assert [e.guardian_id for e in removed] == [guardian["id"]]
    async with api.seed.sessions() as session, session.begin():
        await session.exec(update(Student).values(state="READY"))
    live = await api.http.delete(f"{P}/students/{student['id']}")
    assert _refused(live) == (409, "pickup.in-use")
    async with api.seed.sessions() as session, session.begin():
        await session.exec(update(Student).values(state="AT_SCHOOL"))
    assert (await api.http.delete(f"{P}/students/{student['id']}")).status_code == 204
    assert (await api.http.delete(f"{P}/guardians/{guardian['id']}")).status_code == 204
    gone = await api.http.get(f"{P}/students/{student['id']}")
    assert _refused(gone) == (404, "resource.not-found")
    deleted = [(a.entity, a.entity_id) for a in
               await api.seed.all(AuditEntry, AuditEntry.action == "deleted")]
    assert deleted == [("authorized_person", person["id"]), ("guardian_link", link["id"]),
                       ("student", student["id"]), ("guardian", guardian["id"])]


async def test_a_person_is_edited_after_request_adjustments_then_approved(admin_api):
    api = admin_api
    school = await _school(api, "Um")
    student = await _student(api, school, "Ana")
    person = await api.ok("POST", f"{P}/authorized-persons", json={
        "studentId": student["id"], "name": "Tia", "kind": "permanent"})
    asked = await api.ok("POST", f"{P}/authorized-persons/{person['id']}/request-adjustments",
                         json={"version": 0})
    assert (asked["status"], asked["version"]) == ("adjustments_requested", 1)

    stale = await api.http.patch(f"{P}/authorized-persons/{person['id']}",
                                 json={"version": 0, "name": "Tia Rosa"})
    assert _refused(stale) == (409, "pickup.version-conflict")
    edited = await api.ok("PATCH", f"{P}/authorized-persons/{person['id']}",
                          json={"version": 1, "name": "Tia Rosa", "document": "RG 123"})
    assert (edited["name"], edited["document"], edited["status"], edited["version"]) == \
        ("Tia Rosa", "RG 123", "pending", 2)
    approved = await api.ok("POST", f"{P}/authorized-persons/{person['id']}/approve",
                            json={"version": 2})
    assert approved["status"] == "approved"
    frozen = await api.http.patch(f"{P}/authorized-persons/{person['id']}",
                                  json={"version": 3, "name": "Outra"})
    assert _refused(frozen) == (409, "pickup.status-conflict")
    trail = await api.ok("GET", f"{P}/audit", params={"entity": "authorized_person",
                                                      "entity_id": person["id"]})
    assert [a["action"] for a in trail["items"]] == ["approve", "edited", "request-adjustments",
                                            "created"]


async def test_a_revoked_token_is_refused_on_guardian_routes(admin_api):
    api = admin_api
    school = await _school(api, "Um")
    _, guardian, _ = await _family(api, school)
    issued = await api.ok("POST", f"{P}/guardians/{guardian['id']}/tokens", json={})
    bearer = {"Authorization": f"Bearer {issued['token']}", "X-API-Key": ""}
    assert (await api.http.get(f"{P}/guardian/students", headers=bearer)).status_code == 200
    listed = (await api.ok("GET", f"{P}/guardians/{guardian['id']}/tokens"))["items"]
    assert [t["id"] for t in listed] == [issued["id"]] and "token" not in listed[0]

    revoke = f"{P}/guardians/{guardian['id']}/tokens/{issued['id']}/revoke"
    assert (await api.http.post(revoke)).status_code == 204
    refused = await api.http.get(f"{P}/guardian/students", headers=bearer)
    assert _refused(refused) == (401, "pickup.token-invalid")
    assert _refused(await api.http.post(revoke)) == (404, "resource.not-found")
    revoked = await api.seed.all(AuditEntry, AuditEntry.action == "revoked")
    assert [(a.entity, a.entity_id) for a in revoked] == [("access_token", issued["id"])]


ROSTER = """\
student_registration,student_name,guardian_cpf,guardian_name,guardian_contact,link_kind,\
valid_from,valid_until
A1,Ana,529.982.247-25,Maria,maria@example.com,permanent,,
A1,Ana,111.444.777-35,Avó,,temporary,,2030-01-01T00:00:00-03:00
B2,Bruno,529.982.247-25,Maria,,,,
C3,Caio,,,,,,
"""


async def test_roster_import_reports_each_line_and_is_all_or_nothing(admin_api):
    api = admin_api
    school = await _school(api, "Um")
    url = f"{P}/schools/{school}/roster"
    headers = {"Content-Type": "text/csv"}

    dry = await api.ok("POST", url, content=ROSTER, headers=headers, params={"dry_run": True})
    assert (dry["dryRun"], dry["written"]) == (True, False)
    assert await api.seed.count(Student) == 0

    report = await api.ok("POST", url, content=ROSTER, headers=headers)
    assert report["written"] is True and report["refused"] == 0
    assert [(line["line"], line["student"], line.get("guardian"), line.get("link"))
            for line in report["lines"]] == [
        (2, "created", "created", "created"), (3, "unchanged", "created", "created"),
        (4, "created", "unchanged", "created"), (5, "created", None, None)]
    assert report["summary"]["link"] == {"created": 3}
    links = await api.ok("GET", f"{P}/links", params={"school_id": school})
    assert len(links["items"]) == 3

    again = ROSTER.replace("Bruno", "Bruno Lima").replace("permanent,,", "temporary,,"
                                                          "2031-01-01T00:00:00Z", 1)
    second = await api.ok("POST", url, content=again, headers=headers)
    assert [(line["student"], line.get("link")) for line in second["lines"]][:3] == [
        ("unchanged", "updated"), ("unchanged", "unchanged"), ("updated", "unchanged")]

    bad = ("student_registration;student_name;guardian_cpf;guardian_name\n"
           "D4;Davi;123.456.789-00;Pai\n"      # check digits wrong
           "Z9;;;\n"                           # no such student, no name to create it
           "E5;Eva;;\n")
    refused = await api.http.post(url, content=bad.encode("cp1252"), headers=headers)
    assert _refused(refused) == (422, "pickup.roster-refused")
    body = refused.json()["report"]
    assert body["written"] is False and body["refused"] == 2
    reasons = {line["line"]: line.get("reason", "") for line in body["lines"]}
    assert "CPF inválido" in reasons[2] and "aluno desconhecido" in reasons[3]
    assert reasons[4] == ""  # a good line of a refused file: reported, not written
    assert await api.seed.count(Student) == 3


async def test_a_school_key_reaches_only_its_school(admin_api):
    api = admin_api
    assert (await _school(api, "Um"), await _school(api, "Dois")) == (1, 2)
    ana, guardian_a, _ = await _family(api, 1, "Ana")
    duda, guardian_b, link_b = await _family(api, 2, "Duda")
    a = {"X-API-Key": KEY_A}

    listed = await api.http.get(f"{P}/students", headers=a)
    assert [s["id"] for s in listed.json()["items"]] == [ana["id"]]
    guardians = await api.http.get(f"{P}/guardians", headers=a)
    assert [g["id"] for g in guardians.json()["items"]] == [guardian_a["id"]]
    for method, path, body in (
            ("GET", "students?school_id=2", None),
            ("GET", f"students/{duda['id']}", None),
            ("PATCH", f"students/{duda['id']}", {"revision": 0, "name": "x"}),
            ("DELETE", f"links/{link_b['id']}", None),
            ("GET", "schools/2/board", None),
            ("POST", f"guardians/{guardian_b['id']}/tokens", {}),
            ("POST", "students", {"schoolId": 2, "name": "x"}),
            ("POST", "links", {"studentId": ana["id"], "guardianId": guardian_b["id"],
                               "kind": "permanent"}),
            ("POST", "schools/2/roster", None)):
        response = await api.http.request(method, f"{P}/{path}", json=body, headers=a)
        assert _refused(response) == (404, "resource.not-found"), (method, path)
    for method, path in (("POST", f"{P}/schools"), ("GET", f"{P}/ledger"),
                         ("GET", "/api/jobs")):
        response = await api.http.request(method, path, json={"name": "x"}, headers=a)
        assert _refused(response) == (403, "pickup.school-scope"), path

    mine = await api.http.patch(f"{P}/students/{ana['id']}", headers=a,
                                json={"revision": 0, "name": "Ana B"})
    assert mine.status_code == 200
    trail = await api.http.get(f"{P}/audit", headers=a)
    assert {row["schoolId"] for row in trail.json()["items"]} == {1}
    wrong = await api.http.get(f"{P}/students", headers={"X-API-Key": KEY_A + "x"})
    assert _refused(wrong) == (401, "auth.invalid-key")
    everyone = await api.ok("GET", f"{P}/students")  # the global key
    assert [s["id"] for s in everyone["items"]] == [ana["id"], duda["id"]]
