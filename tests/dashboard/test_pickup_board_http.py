"""The pickup board's staff actions over HTTP: session + CSRF, the card's version, refusals."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import select

from activities.pickup.board import revert_ready
from activities.pickup.models import AuditEntry, QueueSnapshot, Student
from services.dashboard.web import FLASH_COOKIE
from shared.db.models import utcnow
from tests.api.conftest import API_KEY
from tests.dashboard.conftest import csrf_of, sign_in

# Session and CSRF rules don't depend on the store; the transitions have their own API tests.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
KEY = {"X-API-Key": API_KEY}
JSON = {"Accept": "application/json"}


@pytest.fixture(autouse=True)
def _no_timers(settings):
    # No pickup worker here: a READY timer would only linger on the shared Temporal server.
    settings.pickup.timers_enabled = False


async def _awaiting(web) -> tuple[int, int]:
    """A school and one student in AWAITING (version 1), made through the REST API."""
    school = (await web.post("/api/pickup/schools", headers=KEY, json={"name": "Escola Sol"}))
    school_id = school.json()["id"]
    student = await web.post("/api/pickup/students", headers=KEY,
                             json={"schoolId": school_id, "name": "Bia"})
    sid = student.json()["id"]
    assert (await web.post(f"/api/pickup/students/{sid}/arrival", headers=KEY)).is_success
    return school_id, sid


async def _student(web, sid: int) -> Student:
    async with web.context.sessions() as session:
        return await session.get(Student, sid)


async def test_anonymous_and_csrf_less_actions_are_refused_and_change_nothing(web):
    school_id, sid = await _awaiting(web)
    url = f"/pickup/{school_id}/students/{sid}/ready"
    anonymous = await web.post(url, data={"version": "1"}, headers=JSON)
    assert anonymous.status_code == 303 and anonymous.headers["location"].startswith("/login")
    assert (await sign_in(web)).status_code == 303
    missing = await web.post(url, data={"version": "1"}, headers=JSON)
    forged = await web.post(url, data={"version": "1", "csrf_token": "forged"}, headers=JSON)
    assert missing.status_code == forged.status_code == 403
    student = await _student(web, sid)
    assert (student.state, student.version) == ("AWAITING", 1)


async def test_the_board_offers_what_the_machine_allows_and_acts_as_the_operator(operator):
    school_id, sid = await _awaiting(operator)
    page = await operator.get(f"/pickup/{school_id}")
    assert page.status_code == 200
    assert f'action="/pickup/{school_id}/students/{sid}/ready"' in page.text
    assert f"/students/{sid}/undo" not in page.text
    assert f"/students/{sid}/pickup" not in page.text
    token = csrf_of(page.text)

    done = await operator.post(f"/pickup/{school_id}/students/{sid}/ready", headers=JSON,
                               data={"version": "1", "csrf_token": token})
    assert done.status_code == 200, done.text
    body = done.json()
    assert body["message"] == "Bia: pronto para sair."
    assert 'data-version="2"' in body["card"] and ">READY<" in body["card"]
    assert f"/students/{sid}/pickup" in body["card"] and f"/students/{sid}/undo" in body["card"]
    async with operator.context.sessions() as session:
        row = (await session.exec(select(AuditEntry).where(
            AuditEntry.entity_id == sid, AuditEntry.action == "ready"))).one()
    assert row.actor == "operator:operator"

    # htmx-style: the token in the header instead of the form.
    picked = await operator.post(f"/pickup/{school_id}/students/{sid}/pickup",
                                 headers=JSON | {"X-CSRF-Token": token}, data={"version": "2"})
    assert picked.status_code == 200 and ">PICKED_UP<" in picked.json()["card"]
    undone = await operator.post(f"/pickup/{school_id}/students/{sid}/undo", headers=JSON,
                                 data={"version": "3", "csrf_token": token})
    assert undone.status_code == 200 and ">READY<" in undone.json()["card"]
    assert (await _student(operator, sid)).version == 4


async def test_a_stale_card_gets_409_with_the_card_as_it_is_now(operator):
    school_id, sid = await _awaiting(operator)
    token = csrf_of((await operator.get(f"/pickup/{school_id}")).text)
    # Someone else moves the card (READY, then back) while this page still shows version 1.
    await operator.post(f"/api/pickup/students/{sid}/ready", headers=KEY, json={"version": 1})
    await operator.post(f"/api/pickup/students/{sid}/undo", headers=KEY, json={"version": 2})

    stale = await operator.post(f"/pickup/{school_id}/students/{sid}/ready", headers=JSON,
                                data={"version": "1", "csrf_token": token})
    assert stale.status_code == 409
    body = stale.json()
    assert (body["code"], body["message"], body["moved"]) == (
        "pickup.version-conflict", "Outra pessoa já moveu este cartão.", True)
    assert 'data-version="3"' in body["card"] and ">AWAITING<" in body["card"]
    # A different state (the other common race) reads the same to the operator.
    moved = await operator.post(f"/pickup/{school_id}/students/{sid}/pickup", headers=JSON,
                                data={"version": "1", "csrf_token": token})
    assert (moved.status_code, moved.json()["code"], moved.json()["message"]) == (
        409, "pickup.invalid-transition", "Outra pessoa já moveu este cartão.")
    assert (await _student(operator, sid)).version == 3


async def test_without_script_a_form_post_goes_back_to_the_board_with_a_notice(operator):
    school_id, sid = await _awaiting(operator)
    token = csrf_of((await operator.get(f"/pickup/{school_id}")).text)
    done = await operator.post(f"/pickup/{school_id}/students/{sid}/ready",
                               data={"version": "1", "csrf_token": token})
    assert done.status_code == 303 and done.headers["location"] == f"/pickup/{school_id}"
    assert "pronto para sair" in (await operator.get(f"/pickup/{school_id}")).text
    stale = await operator.post(f"/pickup/{school_id}/students/{sid}/ready",
                                data={"version": "1", "csrf_token": token})
    assert stale.status_code == 303 and FLASH_COOKIE in stale.cookies
    board = (await operator.get(f"/pickup/{school_id}")).text
    assert "Outra pessoa já moveu este cartão." in board and "pickup.invalid-transition" in board


async def test_wrong_school_unknown_action_or_missing_version_is_refused(operator):
    school_id, sid = await _awaiting(operator)
    other = (await operator.post("/api/pickup/schools", headers=KEY,
                                 json={"name": "Outra"})).json()["id"]
    token = csrf_of((await operator.get(f"/pickup/{school_id}")).text)
    form = {"version": "1", "csrf_token": token}
    elsewhere = await operator.post(f"/pickup/{other}/students/{sid}/ready", headers=JSON,
                                    data=form)
    assert (elsewhere.status_code, elsewhere.json()["code"]) == (404, "resource.not-found")
    unknown = await operator.post(f"/pickup/{school_id}/students/{sid}/arrival", headers=JSON,
                                  data=form)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "resource.not-found")
    bare = await operator.post(f"/pickup/{school_id}/students/{sid}/ready", headers=JSON,
                               data={"csrf_token": token})
    assert (bare.status_code, bare.json()["code"]) == (422, "request.invalid")
    assert (await operator.get(f"/pickup/{other}/students/{sid}/card")).status_code == 404
    assert (await _student(operator, sid)).version == 1


async def test_automation_with_the_api_key_needs_no_csrf_token(web):
    school_id, sid = await _awaiting(web)
    done = await web.post(f"/pickup/{school_id}/students/{sid}/ready", headers=JSON | KEY,
                          data={"version": "1"})
    assert done.status_code == 200
    async with web.context.sessions() as session:
        row = (await session.exec(select(AuditEntry).where(
            AuditEntry.entity_id == sid, AuditEntry.action == "ready"))).one()
    assert row.actor == "api-key"


async def test_a_card_that_left_by_timeout_looks_unlike_a_picked_up_one(operator):
    school_id, sid = await _awaiting(operator)
    await operator.post(f"/api/pickup/students/{sid}/ready", headers=KEY, json={"version": 1})
    async with operator.context.sessions() as session, session.begin():
        assert await revert_ready(session, student_id=sid, version=2, at=utcnow(),
                                  actor="timer:ready") is not None
    timed_out = (await operator.get(f"/pickup/{school_id}/students/{sid}/card")).text
    assert 'class="left-by-timeout"' in timed_out
    assert "Saiu do quadro: tempo de prontidão esgotado" in timed_out
    assert "/undo" not in timed_out  # nothing to undo: the timer's revert is final

    other = (await operator.post("/api/pickup/students", headers=KEY, json={
        "schoolId": school_id, "name": "Caio"})).json()["id"]
    for path, body in (("arrival", None), ("ready", {"version": 1}), ("pickup", {"version": 2})):
        assert (await operator.post(f"/api/pickup/students/{other}/{path}", headers=KEY,
                                    json=body)).is_success
    picked = (await operator.get(f"/pickup/{school_id}/students/{other}/card")).text
    assert 'class="picked-up"' in picked and '<span class="badge picked">retirado</span>' in picked
    assert "tempo de prontidão" not in picked


async def test_the_schools_page_draws_the_outbound_queues_day(operator):
    async with operator.context.sessions() as session, session.begin():
        session.add(QueueSnapshot(at=utcnow() - timedelta(hours=1), queue="ledger", pending=3,
                                  failed=1, oldest_pending_seconds=60))
    page = await operator.get("/pickup")
    assert page.status_code == 200
    assert page.text.count('<svg xmlns="http://www.w3.org/2000/svg" class="queue-chart"') == 2
    assert "ledger: 3 pending and 1 failed now" in page.text
    assert "notifications: no snapshot since" in page.text
