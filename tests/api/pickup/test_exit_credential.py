"""READY is a live credential a controller can read: the student's own card / QR code.

Over real HTTP with the Control iD simulator, which identifies only by a presented card or QR
value: the grant puts exactly the student's credential on the exit rule for the READY window,
the exit read there is the pickup (origin turnstile), and each revocation removes exactly it.
"""

from __future__ import annotations

import httpx
from sqlmodel import select

from activities.pickup.board import revert_ready
from activities.pickup.contracts.board import DrainBatchInput, Outbox
from activities.pickup.ledger import LedgerDelivery
from activities.pickup.models import AuditEntry, BoardEvent, LedgerEntry, Student
from activities.pickup.turnstile_client import TurnstileClients
from services.simulators.turnstile import TurnstileSimSettings, create_app
from shared.db.models import as_utc, utcnow
from tests.support.pickup import serve

CARD = 4_000_123
NOT_IDENTIFIED, GRANTED = 3, 7


class Gate:
    """The API and a simulated controller, both on loopback, the Monitor pointed at the API."""

    def __init__(self, api, http: httpx.AsyncClient, turnstile: str) -> None:
        self.api, self.http, self.turnstile = api, http, turnstile
        clients = TurnstileClients(http, login="admin", password="admin", timeout=5)
        self.delivery = LedgerDelivery(api.context.sessions, api.context.settings.pickup,
                                       clients)

    async def drain(self, school_id: int) -> int:
        result = await self.delivery.drain_ledger(DrainBatchInput(outbox=Outbox.LEDGER,
                                                                  key=school_id))
        assert result.failed == 0
        return result.delivered

    async def present(self, **credential) -> dict:
        response = await self.http.post(f"{self.turnstile}/_sim/access", json=credential)
        assert response.status_code == 200, response.text
        await self.http.post(f"{self.turnstile}/_sim/deliveries/flush")
        return response.json()

    async def ready(self, student_id: int) -> None:
        await self.api.ok("POST", f"/api/pickup/students/{student_id}/arrival")
        current = await self.api.ok("GET", f"/api/pickup/students/{student_id}")
        await self.api.ok("POST", f"/api/pickup/students/{student_id}/ready",
                          json={"version": current["version"]})


async def _gate(api, http, base: str, turnstile: str) -> tuple[Gate, dict]:
    school = await api.ok("POST", "/api/pickup/schools",
                          json={"name": "Escola", "turnstileUrl": turnstile})
    await api.ok("POST", f"/api/pickup/schools/{school['id']}/turnstile/monitor",
                 json={"publicBaseUrl": base})
    return Gate(api, http, turnstile), school


async def test_the_students_card_opens_the_exit_while_ready_and_never_after(pickup_api):
    api = pickup_api
    sim = create_app(TurnstileSimSettings(push_retry_delay_seconds=0.1))
    async with serve(api.app) as base, serve(sim) as turnstile, httpx.AsyncClient() as http:
        gate, school = await _gate(api, http, base, turnstile)
        sid = (await api.ok("POST", "/api/pickup/students", json={
            "schoolId": school["id"], "name": "Ana", "cardValue": CARD}))["id"]

        # Before READY the card is on no device user: not identified.
        assert (await gate.present(card_value=CARD))["event"] == NOT_IDENTIFIED
        await gate.ready(sid)
        grant = (await api.seed.all(LedgerEntry))[-1]
        ready_at = int(as_utc((await api.seed.get(Student, sid)).state_since).timestamp())
        assert (grant.command, grant.card_value, grant.qr_value) == ("grant", CARD, None)
        # The READY window (60 min timeout), with the device grace on both sides.
        assert (grant.begin_time, grant.end_time) == (ready_at - 300, ready_at + 65 * 60)
        assert await gate.drain(school["id"]) == 1

        # The old registration-only path is gone: the device never identified by it.
        typed = await http.post(f"{turnstile}/_sim/access",
                                json={"registration": f"student-{sid}"})
        assert typed.status_code == 422
        passage = await gate.present(card_value=CARD)
        assert passage["event"] == GRANTED

        student = await api.seed.get(Student, sid)
        assert (student.state, student.state_reason) == ("PICKED_UP", "saída na catraca")
        async with api.context.sessions() as session:
            picked = (await session.exec(select(AuditEntry).where(
                AuditEntry.entity_id == sid, AuditEntry.action == "picked-up"))).one()
            event = (await session.exec(select(BoardEvent).where(
                BoardEvent.student_id == sid).order_by(BoardEvent.id.desc()))).first()
        assert (picked.details["origin"], picked.actor) == ("turnstile",
                                                            f"turnstile:{school['id']}")
        assert event.payload["origin"] == "turnstile"
        revoke = (await api.seed.all(LedgerEntry))[-1]
        assert (revoke.command, revoke.card_value, revoke.status) == ("revoke", CARD,
                                                                      "pending")

        # Once the revocation reached the device, the same card is refused there.
        assert await gate.drain(school["id"]) == 1
        assert (await gate.present(card_value=CARD))["event"] == NOT_IDENTIFIED


async def test_a_ready_timeout_revokes_exactly_the_granted_qr_code(pickup_api):
    api = pickup_api
    sim = create_app(TurnstileSimSettings(push_retry_delay_seconds=0.1))
    async with serve(api.app) as base, serve(sim) as turnstile, httpx.AsyncClient() as http:
        gate, school = await _gate(api, http, base, turnstile)
        sid = (await api.ok("POST", "/api/pickup/students", json={
            "schoolId": school["id"], "name": "Ana"}))["id"]
        await api.ok("PUT", f"/api/pickup/students/{sid}/credential",
                     json={"qrValue": "qr-ana"})
        await gate.ready(sid)
        await gate.drain(school["id"])
        student = await api.seed.get(Student, sid)
        async with api.context.sessions() as session, session.begin():
            reverted = await revert_ready(session, student_id=sid, version=student.version,
                                          at=utcnow(), actor="test")
        assert reverted is not None
        revoke = (await api.seed.all(LedgerEntry))[-1]
        assert (revoke.command, revoke.qr_value, revoke.card_value) == ("revoke", "qr-ana",
                                                                         None)
        assert await gate.drain(school["id"]) == 1
        refused = await gate.present(qrcode="qr-ana")
        assert refused["event"] == NOT_IDENTIFIED
    student = await api.seed.get(Student, sid)
    assert student.state == "AT_SCHOOL"  # the refused QR code picked nobody up


async def test_a_new_card_while_ready_moves_the_grant_and_the_old_one_stops(pickup_api):
    api = pickup_api
    sim = create_app(TurnstileSimSettings(push_retry_delay_seconds=0.1))
    async with serve(api.app) as base, serve(sim) as turnstile, httpx.AsyncClient() as http:
        gate, school = await _gate(api, http, base, turnstile)
        sid = (await api.ok("POST", "/api/pickup/students", json={
            "schoolId": school["id"], "name": "Ana", "cardValue": CARD}))["id"]
        await gate.ready(sid)
        await gate.drain(school["id"])
        grant = (await api.seed.all(LedgerEntry))[-1]
        await api.ok("PUT", f"/api/pickup/students/{sid}/credential",
                     json={"cardValue": CARD + 1})
        revoke, regrant = (await api.seed.all(LedgerEntry))[-2:]
        assert (revoke.command, revoke.card_value) == ("revoke", CARD)
        assert (regrant.command, regrant.card_value) == ("grant", CARD + 1)
        assert (regrant.begin_time, regrant.end_time) == (grant.begin_time, grant.end_time)
        assert await gate.drain(school["id"]) == 2
        assert (await gate.present(card_value=CARD))["event"] == NOT_IDENTIFIED
        assert (await gate.present(card_value=CARD + 1))["event"] == GRANTED
    assert (await api.seed.get(Student, sid)).state == "PICKED_UP"


async def test_a_student_without_a_credential_gets_no_unreadable_grant(pickup_api):
    api = pickup_api
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    sid = (await api.ok("POST", "/api/pickup/students",
                        json={"schoolId": school["id"], "name": "Ana"}))["id"]
    await api.ok("POST", f"/api/pickup/students/{sid}/arrival")
    await api.ok("POST", f"/api/pickup/students/{sid}/ready", json={"version": 1})
    assert await api.seed.all(LedgerEntry) == []
    async with api.context.sessions() as session:
        ready = (await session.exec(select(AuditEntry).where(
            AuditEntry.entity_id == sid, AuditEntry.action == "ready"))).one()
    assert ready.details["exit_credential"] is False
    # Staff confirm instead; there is nothing on the device to revoke.
    await api.ok("POST", f"/api/pickup/students/{sid}/pickup", json={"version": 2})
    assert await api.seed.all(LedgerEntry) == []


async def test_student_credentials_are_unique_per_school_like_guardians(pickup_api):
    api = pickup_api
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    await api.ok("POST", "/api/pickup/guardians", json={
        "name": "Maria", "schoolId": school["id"], "cardValue": CARD})
    taken = await api.http.post("/api/pickup/students", json={
        "schoolId": school["id"], "name": "Ana", "cardValue": CARD})
    assert (taken.status_code, taken.json()["code"]) == (409, "pickup.credential-taken")
    assert await api.seed.count(Student) == 0  # the refused creation left nothing
    sid = (await api.ok("POST", "/api/pickup/students", json={
        "schoolId": school["id"], "name": "Ana", "qrValue": "qr-ana"}))["id"]
    clash = await api.http.put(f"/api/pickup/students/{sid}/credential",
                               json={"cardValue": CARD})
    assert (clash.status_code, clash.json()["code"]) == (409, "pickup.credential-taken")
    empty = await api.http.put(f"/api/pickup/students/{sid}/credential", json={})
    assert (empty.status_code, empty.json()["code"]) == (422, "request.invalid")
    missing = await api.http.put("/api/pickup/students/999/credential", json={"qrValue": "x"})
    assert (missing.status_code, missing.json()["code"]) == (404, "resource.not-found")


async def test_the_roster_gives_students_their_cards(pickup_api):
    api = pickup_api
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    csv = ("student_registration,student_name,student_card_value,student_qr_value\n"
           f"A1,Ana,{CARD},\nB2,Bruno,,qr-bruno\n")
    report = await api.ok("POST", f"/api/pickup/schools/{school['id']}/roster",
                          content=csv.encode(), headers={"Content-Type": "text/csv"})
    assert report["written"] is True
    students = {s["registration"]: s["id"] for s in (await api.ok(
        "GET", f"/api/pickup/students?school_id={school['id']}"))["items"]}
    for registration, field, value in (("A1", "card_value", CARD),
                                       ("B2", "qr_value", "qr-bruno")):
        sid = students[registration]
        await api.ok("POST", f"/api/pickup/students/{sid}/arrival")
        await api.ok("POST", f"/api/pickup/students/{sid}/ready", json={"version": 1})
        assert getattr((await api.seed.all(LedgerEntry))[-1], field) == value
    again = await api.ok("POST", f"/api/pickup/schools/{school['id']}/roster",
                         content=csv.encode(), headers={"Content-Type": "text/csv"})
    assert again["summary"]["student"] == {"unchanged": 2}
    bad = await api.http.post(f"/api/pickup/schools/{school['id']}/roster",
                              content=b"student_registration,student_card_value\nA1,abc\n",
                              headers={"Content-Type": "text/csv"})
    assert (bad.status_code, bad.json()["code"]) == (422, "pickup.roster-refused")


async def test_revoke_names_the_granted_values_even_after_a_credential_change(pickup_api):
    api = pickup_api
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    sid = (await api.ok("POST", "/api/pickup/students", json={
        "schoolId": school["id"], "name": "Ana", "cardValue": CARD}))["id"]
    await api.ok("POST", f"/api/pickup/students/{sid}/arrival")
    await api.ok("POST", f"/api/pickup/students/{sid}/ready", json={"version": 1})
    await api.ok("POST", f"/api/pickup/students/{sid}/pickup", json={"version": 2})
    # Changed after the exit: nothing on the device to swap, the revoke named the old card.
    await api.ok("PUT", f"/api/pickup/students/{sid}/credential", json={"cardValue": CARD + 7})
    entries = await api.seed.all(LedgerEntry)
    assert [(e.command, e.card_value) for e in entries] == [("grant", CARD), ("revoke", CARD)]
