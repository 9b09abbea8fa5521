"""Pickup administration over HTTP: each action through the face as the signed-in operator, and
each refusal shown as a message on the page it came from."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import httpx
import pytest
from sqlmodel import select

from activities.pickup.models import (
    AuditEntry,
    AuthorizedPerson,
    Credential,
    EarlyRelease,
    Guardian,
    GuardianLink,
    School,
    Student,
)
from services.dashboard.routes.pickup_forms import PAGE_SIZE
from services.simulators.turnstile import TurnstileSimSettings
from services.simulators.turnstile import create_app as turnstile_app
from tests.dashboard.conftest import csrf_of, sign_in
from tests.support.pickup import serve

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
ACTOR = "operator:operator"
CPF = "529.982.247-25"
ROSTER = ("student_registration,student_name,guardian_cpf,guardian_name,link_kind\n"
          "A1,Ana,52998224725,Maria,permanent\n"
          "A2,Beto,,,\n")
NEXT = re.compile(r'<a href="([^"]+)" rel="next">Next page</a>')


@pytest.fixture(autouse=True)
def _no_timers(settings):
    # No pickup worker here: a temporary record's expiry timer would only linger.
    settings.pickup.timers_enabled = False


class Admin:
    """The signed-in operator's client, its CSRF token, and what the store holds."""

    def __init__(self, web: httpx.AsyncClient, token: str) -> None:
        self.web, self.token = web, token
        self.sessions = web.context.sessions  # type: ignore[attr-defined]

    async def submit(self, url: str, **data: str) -> str:
        """Post a form; the page it sends the operator back to, as text (notice included)."""
        answer = await self.web.post(url, data={**data, "csrf_token": self.token})
        assert answer.status_code == 303, answer.text
        page = await self.web.get(answer.headers["location"])
        assert page.status_code == 200, page.text
        return html.unescape(page.text)

    async def school(self, name: str = "Escola Sol", **fields: str) -> int:
        page = await self.submit("/pickup/schools", name=name, **fields)
        assert f"School {name} created." in page
        async with self.sessions() as session:
            return (await session.exec(select(School.id).where(School.name == name))).one()

    async def get(self, model, ident: int):
        async with self.sessions() as session:
            return await session.get(model, ident)

    async def audit(self, entity: str, action: str) -> list[AuditEntry]:
        async with self.sessions() as session:
            return list((await session.exec(select(AuditEntry).where(
                AuditEntry.entity == entity, AuditEntry.action == action))).all())


@pytest.fixture
async def admin(operator) -> Admin:
    return Admin(operator, csrf_of((await operator.get("/pickup")).text))


async def test_forms_need_a_session_and_the_csrf_token(web):
    anonymous = await web.post("/pickup/schools", data={"name": "X"})
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/login")
    assert (await sign_in(web)).status_code == 303
    forged = await web.post("/pickup/schools", data={"name": "X", "csrf_token": "forged"})
    assert forged.status_code == 403
    async with web.context.sessions() as session:  # type: ignore[attr-defined]
        assert (await session.exec(select(School))).all() == []


async def test_a_school_is_created_and_edited_as_the_operator(admin):
    school_id = await admin.school()
    created = await admin.audit("school", "created")
    assert [(a.entity_id, a.actor) for a in created] == [(school_id, ACTOR)]
    url = f"/pickup/{school_id}/admin/settings"
    page = await admin.submit(url, time_zone="America/Manaus", day_start="06:30",
                              arrival_timeout_minutes="20", turnstile_url="http://ctl.local")
    assert "Settings saved." in page and "America/Manaus" in page
    school = await admin.get(School, school_id)
    assert (school.time_zone, school.day_start, school.arrival_timeout_minutes,
            school.turnstile_url) == ("America/Manaus", "06:30", 20, "http://ctl.local")
    (updated,) = await admin.audit("school", "updated")
    assert updated.actor == ACTOR
    assert updated.details["fields"] == ["arrival_timeout_minutes", "day_start",
                                         "time_zone", "turnstile_url"]

    for field, value, message in (
            ("time_zone", "Mars/Base", "unknown time zone 'Mars/Base'"),
            ("day_start", "25:00", "Day start must be HH:MM"),
            ("arrival_timeout_minutes", "0", "Arrival timeout must be minutes above 0"),
            ("turnstile_url", "file:///etc/passwd", "must be an http:// or https:// URL")):
        refused = await admin.submit(url, **{field: value})
        assert "request.invalid" in refused and message in refused, field
    assert await admin.get(School, school_id) == school
    assert len(await admin.audit("school", "updated")) == 1

    nameless = await admin.submit("/pickup/schools", name=" ")
    assert "Name is required." in nameless


async def test_the_monitor_is_pointed_and_an_unreachable_controller_is_a_message(admin):
    sim = turnstile_app(TurnstileSimSettings())
    async with serve(sim) as turnstile:
        school_id = await admin.school(turnstile_url=turnstile)
        page = await admin.submit(f"/pickup/{school_id}/admin/monitor",
                                  public_base_url="http://esteira.local:8000")
        assert "The controller now pushes to http://esteira.local:8000/… with a new token" in page
    await sim.state.device.monitor.aclose()
    assert (await admin.get(School, school_id)).monitor_token_hash
    (configured,) = await admin.audit("school", "monitor-configured")
    assert configured.actor == ACTOR and configured.school_id == school_id

    # The controller is gone now: refused, with the code, on the school's page.
    refused = await admin.submit(f"/pickup/{school_id}/admin/monitor",
                                 public_base_url="http://esteira.local:8000")
    assert "pickup.turnstile-unavailable" in refused
    assert len(await admin.audit("school", "monitor-configured")) == 1


async def test_the_roster_is_previewed_then_applied(admin):
    school_id = await admin.school()
    base = f"/pickup/{school_id}/admin/roster"
    preview = await admin.web.post(f"{base}/preview", data={"csrf_token": admin.token},
                                   files={"roster": ("roster.csv", ROSTER.encode(), "text/csv")})
    assert preview.status_code == 200, preview.text
    text = html.unescape(preview.text)
    assert "Preview only: nothing was written." in text
    assert f'action="{base}/apply"' in text and ">Aplicar<" in text
    async with admin.sessions() as session:
        assert (await session.exec(select(Student))).all() == []
    csv_text = text.split('name="csv_text" value="', 1)[1].split('"', 1)[0]
    assert csv_text == ROSTER

    applied = await admin.web.post(f"{base}/apply",
                                   data={"csrf_token": admin.token, "csv_text": csv_text})
    assert applied.status_code == 200 and "Roster applied." in applied.text
    assert "Aplicar" not in applied.text
    async with admin.sessions() as session:
        names = sorted((await session.exec(select(Student.name))).all())
        link = (await session.exec(select(GuardianLink))).one()
    assert names == ["Ana", "Beto"] and link.kind == "permanent"
    created = await admin.audit("student", "created")
    assert {a.actor for a in created} == {ACTOR} and len(created) == 2


async def test_a_refused_roster_line_is_shown_and_offers_no_apply(admin):
    school_id = await admin.school()
    bad = ROSTER.replace("52998224725", "12345678900")
    refused = await admin.web.post(f"/pickup/{school_id}/admin/roster/preview",
                                   data={"csrf_token": admin.token},
                                   files={"roster": ("r.csv", bad.encode(), "text/csv")})
    assert refused.status_code == 422
    text = html.unescape(refused.text)
    assert "1 line(s) refused; nothing was written." in text
    assert "CPF inválido: '12345678900'" in text and "Aplicar" not in text

    missing = await admin.submit(f"/pickup/{school_id}/admin/roster/preview")
    assert "Choose a roster file (CSV)." in missing
    empty = await admin.submit(f"/pickup/{school_id}/admin/roster/apply", csv_text=" ")
    assert "The roster to apply is missing" in empty


async def test_students_and_guardians_with_credentials(admin):
    school_id = await admin.school()
    students = f"/pickup/{school_id}/admin/students"
    page = await admin.submit(students, name="Ana", registration="A1", card_value="111")
    assert "Student Ana added" in page and "<td>A1</td>" in page
    taken = await admin.submit(students, name="Beto", card_value="111")
    assert "pickup.credential-taken" in taken
    blank = await admin.submit(students, name="")
    assert "Name is required." in blank
    async with admin.sessions() as session:
        ana = (await session.exec(select(Student))).one()
    (created,) = await admin.audit("student", "created")
    assert created.actor == ACTOR

    guardians = f"/pickup/{school_id}/admin/guardians"
    invalid = await admin.submit(guardians, name="Maria", cpf="123.456.789-00")
    assert "CPF inválido" in invalid
    page = await admin.submit(guardians, name="Maria", cpf=CPF, card_value="222")
    assert "Guardian Maria added" in page and "•••.982.•••-25" in page and CPF not in page
    async with admin.sessions() as session:
        maria = (await session.exec(select(Guardian))).one()
    (created,) = await admin.audit("guardian", "created")
    assert created.actor == ACTOR and created.school_id == school_id

    taken = await admin.submit(f"{guardians}/credential", guardian_id=str(maria.id),
                               card_value="111")
    assert "pickup.credential-taken" in taken
    none = await admin.submit(f"{guardians}/credential", guardian_id=str(maria.id))
    assert "Give a card number or a QR code." in none
    done = await admin.submit(f"{guardians}/credential", guardian_id=str(maria.id),
                              qr_value="QR-MARIA")
    assert f"Credential of guardian {maria.id} set." in done
    done = await admin.submit(f"{students}/credential", student_id=str(ana.id),
                              card_value="333")
    assert f"Credential of student {ana.id} set." in done
    async with admin.sessions() as session:
        held = {(c.holder_kind, c.card_value, c.qr_value)
                for c in (await session.exec(select(Credential))).all()}
    # Setting a credential replaces both values: the card not given is gone.
    assert held == {("student", 333, None), ("guardian", None, "QR-MARIA")}
    assert {a.actor for a in await admin.audit("guardian", "credential-set")} == {ACTOR}

    # Another school's student is not reachable from this school's pages.
    other = await admin.school("Escola Lua")
    elsewhere = await admin.submit(f"/pickup/{other}/admin/students/credential",
                                   student_id=str(ana.id), card_value="444")
    assert "not-found" in elsewhere and f"Student {ana.id}" in elsewhere


async def test_links_with_a_validity_period_in_the_schools_time_zone(admin):
    school_id = await admin.school(time_zone="America/Sao_Paulo")
    await admin.submit(f"/pickup/{school_id}/admin/students", name="Ana")
    await admin.submit(f"/pickup/{school_id}/admin/guardians", name="Maria")
    async with admin.sessions() as session:
        ana = (await session.exec(select(Student))).one()
        maria = (await session.exec(select(Guardian))).one()
    links = f"/pickup/{school_id}/admin/links"
    ids = {"student_id": str(ana.id), "guardian_id": str(maria.id)}

    undated = await admin.submit(links, **ids, kind="temporary")
    assert "pickup.invalid-validity" in undated
    garbled = await admin.submit(links, **ids, kind="temporary", valid_until="tomorrow")
    assert "Valid until must be a date and time" in garbled
    page = await admin.submit(links, **ids, kind="temporary", valid_from="2030-01-10T07:00",
                              valid_until="2030-01-12T18:30")
    assert f"Guardian {maria.id} linked to student {ana.id} (temporary)." in page
    async with admin.sessions() as session:
        link = (await session.exec(select(GuardianLink))).one()
    # 18:30 in São Paulo (UTC-3) is 21:30 UTC.
    assert link.valid_until.replace(tzinfo=UTC) == datetime(2030, 1, 12, 21, 30, tzinfo=UTC)
    assert "2030-01-12 21:30:00 UTC" in page
    (created,) = await admin.audit("guardian_link", "created")
    assert created.actor == ACTOR

    removed = await admin.submit(f"{links}/{link.id}/delete")
    assert f"Link {link.id} removed." in removed
    assert (await admin.audit("guardian_link", "deleted"))[0].actor == ACTOR
    again = await admin.submit(f"{links}/{link.id}/delete")
    assert "not-found" in again


async def test_authorized_persons_are_decided_with_their_version(admin):
    school_id = await admin.school()
    await admin.submit(f"/pickup/{school_id}/admin/students", name="Ana", card_value="111")
    async with admin.sessions() as session:
        ana = (await session.exec(select(Student))).one()
    persons = f"/pickup/{school_id}/admin/persons"
    page = await admin.submit(persons, student_id=str(ana.id), name="Tia Rosa",
                              kind="temporary", valid_until="2030-01-12T18:30")
    assert "Authorized person Tia Rosa added" in page
    async with admin.sessions() as session:
        rosa = (await session.exec(select(AuthorizedPerson))).one()
    assert f'action="{persons}/{rosa.id}/approve"' in page

    taken = await admin.submit(f"{persons}/credential", person_id=str(rosa.id),
                               card_value="111")
    assert "pickup.credential-taken" in taken
    approved = await admin.submit(f"{persons}/{rosa.id}/approve", version="0")
    assert "Tia Rosa: approved." in approved
    stale = await admin.submit(f"{persons}/{rosa.id}/revoke", version="0")
    assert "pickup.version-conflict" in stale
    again = await admin.submit(f"{persons}/{rosa.id}/request-adjustments", version="1")
    assert "pickup.status-conflict" in again
    unknown = await admin.submit(f"{persons}/{rosa.id}/bless", version="1")
    assert "No decision 'bless'." in unknown
    versionless = await admin.submit(f"{persons}/{rosa.id}/revoke")
    assert "The record's version is missing." in versionless
    revoked = await admin.submit(f"{persons}/{rosa.id}/revoke", version="1")
    assert "Tia Rosa: revoked." in revoked
    rosa = await admin.get(AuthorizedPerson, rosa.id)
    assert (rosa.status, rosa.version) == ("revoked", 2)
    decided = (await admin.audit("authorized_person", "approve")
               + await admin.audit("authorized_person", "revoke"))
    assert decided and {a.actor for a in decided} == {ACTOR}

    permanent_dated = await admin.submit(persons, student_id=str(ana.id), name="X",
                                         kind="permanent", valid_until="2030-01-12T18:30")
    assert "pickup.invalid-validity" in permanent_dated


async def test_early_releases_are_approved_and_used_once(admin):
    school_id = await admin.school()
    await admin.submit(f"/pickup/{school_id}/admin/students", name="Ana")
    async with admin.sessions() as session:
        ana = (await session.exec(select(Student))).one()
    releases = f"/pickup/{school_id}/admin/releases"
    undated = await admin.submit(releases, student_id=str(ana.id))
    assert "Valid until is required." in undated
    page = await admin.submit(releases, student_id=str(ana.id), valid_until="2030-01-12T18:30",
                              reason="Dentista")
    assert "pending approval" in page and "Dentista" in page
    async with admin.sessions() as session:
        release = (await session.exec(select(EarlyRelease))).one()
    assert "Early release" in await admin.submit(f"{releases}/{release.id}/approve",
                                                 version="0")
    used = await admin.submit(f"{releases}/{release.id}/use", version="1")
    assert f"Early release {release.id}: used." in used
    twice = await admin.submit(f"{releases}/{release.id}/use", version="2")
    assert "pickup.status-conflict" in twice
    release = await admin.get(EarlyRelease, release.id)
    assert (release.status, release.version) == ("used", 2)
    kinds = {(a.action, a.actor) for a in await admin.audit("early_release", "approve")
             + await admin.audit("early_release", "use")}
    assert kinds == {("approve", ACTOR), ("use", ACTOR)}


async def test_lists_page_with_the_faces_cursor(admin):
    school_id = await admin.school()
    face = admin.web.context.faces.pickup  # type: ignore[attr-defined]
    for n in range(PAGE_SIZE + 1):
        await face.records.create_student(school_id=school_id, name=f"Aluno {n:03}",
                                          actor="test")
    first = await admin.web.get(f"/pickup/{school_id}/admin/students")
    assert f"Aluno {PAGE_SIZE - 1:03}" in first.text and f"Aluno {PAGE_SIZE:03}" not in first.text
    next_url = html.unescape(NEXT.search(first.text).group(1))
    assert "cursor=" in next_url
    second = await admin.web.get(next_url)
    assert f"Aluno {PAGE_SIZE:03}" in second.text and "Aluno 000" not in second.text
    assert 'rel="next"' not in second.text
