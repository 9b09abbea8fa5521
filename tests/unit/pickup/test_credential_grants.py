"""Grants carry a credential: the card / QR code goes to the device with its window, and a
revocation removes exactly that credential."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from activities.pickup.authorizations import decide_person
from activities.pickup.contracts.board import DrainBatchInput, Outbox, SubjectKind
from activities.pickup.credentials import drop_credentials, put_credential
from activities.pickup.ledger import LedgerDelivery
from activities.pickup.models import LedgerEntry
from shared.db.models import utcnow
from shared.errors import EsteiraError
from tests.support.pickup import TURNSTILE_URL, simulated_turnstile

BEGIN, END = 1_767_366_000, 1_767_366_000 + 3600
CARD, QR = 4_294_967_301, "qr-tia-1"


async def _rows(http, table: str) -> list[dict]:
    login = (await http.post("/login.fcgi", json={"login": "admin", "password": "admin"})).json()
    found = await http.post("/load_objects.fcgi", params=login, json={"object": table})
    return found.json()[table]


async def _present(http, at: int, **credential) -> str:
    answer = await http.post("/_sim/access", json={**credential, "at": at, "turn": False})
    return answer.json()["reason"] if answer.json()["event"] != 13 else "granted"


async def test_a_grant_puts_the_card_and_qr_on_the_user_with_their_window():
    _app, clients, http = simulated_turnstile()
    client = clients.for_url(TURNSTILE_URL)
    uid = await client.grant(registration="authorized-1", name="Tia", begin_time=BEGIN,
                             end_time=END, card_value=CARD, qr_value=QR)

    assert [(c["value"], c["user_id"], c["begin_time"], c["end_time"])
            for c in await _rows(http, "cards")] == [(CARD, uid, BEGIN, END)]
    assert [(q["value"], q["user_id"], q["begin_time"], q["end_time"])
            for q in await _rows(http, "qrcodes")] == [(QR, uid, BEGIN, END)]
    assert await _present(http, BEGIN + 60, card_value=CARD) == "granted"
    assert await _present(http, BEGIN + 60, qrcode=QR) == "granted"
    assert await _present(http, BEGIN - 60, card_value=CARD) == "before the credential's begin_time"
    assert await _present(http, END + 60, qrcode=QR) == "after the credential's end_time"
    # Granting again (a redelivery) changes nothing.
    assert await client.grant(registration="authorized-1", name="Tia", begin_time=BEGIN,
                              end_time=END, card_value=CARD, qr_value=QR) == uid
    assert len(await _rows(http, "cards")) == len(await _rows(http, "qrcodes")) == 1
    await http.aclose()


async def test_the_simulator_checks_a_credential_window_apart_from_the_user():
    _app, clients, http = simulated_turnstile()
    client = clients.for_url(TURNSTILE_URL)
    # The user is valid all day; only the card's own window closes.
    await client.grant(registration="guardian-1", name="Maria", card_value=CARD, qr_value=QR)
    login = (await http.post("/login.fcgi", json={"login": "admin", "password": "admin"})).json()
    await http.post("/modify_objects.fcgi", params=login, json={
        "object": "cards", "values": {"end_time": END}, "where": {"cards": {"value": CARD}}})
    assert await _present(http, END - 1, card_value=CARD) == "granted"
    assert await _present(http, END + 1, card_value=CARD) == "after the credential's end_time"
    # The same user's QR code has no window of its own.
    assert await _present(http, END + 1, qrcode=QR) == "granted"
    # Nobody is identified by a typed registration at a turnstile.
    typed = await http.post("/_sim/access", json={"registration": "guardian-1", "at": END})
    assert typed.status_code == 422
    await http.aclose()


async def test_a_revoke_removes_exactly_that_credential():
    _app, clients, http = simulated_turnstile()
    client = clients.for_url(TURNSTILE_URL)
    await client.grant(registration="authorized-1", name="Tia", card_value=CARD, qr_value=QR)
    await client.grant(registration="authorized-2", name="Avó", card_value=CARD + 1)

    assert await client.revoke("authorized-1", card_value=CARD) == 1
    assert await _present(http, BEGIN, card_value=CARD) == "credential not registered"
    assert await _present(http, BEGIN, qrcode=QR) == "granted"
    assert await _present(http, BEGIN, card_value=CARD + 1) == "granted"
    # Its last credential gone, the user goes too; the other person is untouched.
    assert await client.revoke("authorized-1", qr_value=QR) == 2
    assert [u["registration"] for u in await _rows(http, "users")] == ["authorized-2"]
    assert await client.revoke("authorized-1", qr_value=QR) == 0
    await http.aclose()


async def test_an_approved_person_credential_reaches_the_device_and_a_swap_revokes_the_old(store):
    _app, clients, http = simulated_turnstile()
    school = await store.seed.school(url=TURNSTILE_URL)
    student = await store.seed.student(school)
    until = datetime.fromtimestamp(END, UTC) + timedelta(days=3650)
    person = await store.seed.person(student, until=until)
    await store.pickup.credentials.set_person_credential(
        person_id=person.id, card_value=CARD, qr_value=QR, actor="secretaria")
    assert store.kicker.controllers == []  # not on the turnstile yet: nothing to send
    async with store.sessions() as session, session.begin():
        await decide_person(session, person_id=person.id, decision="approve", version=0,
                            at=utcnow(), actor="secretaria")
    delivery = LedgerDelivery(store.sessions, store.settings.pickup, clients)
    drain = DrainBatchInput(outbox=Outbox.LEDGER, key=school.id)
    assert (await delivery.drain_ledger(drain)).delivered == 1
    [grant] = await store.seed.all(LedgerEntry)
    assert (grant.card_value, grant.qr_value, grant.end_time) == (CARD, QR,
                                                                  int(until.timestamp()))
    assert [c["end_time"] for c in await _rows(http, "cards")] == [int(until.timestamp())]

    # A new card: the old one is revoked on the device, the QR code stays.
    await store.pickup.credentials.set_person_credential(
        person_id=person.id, card_value=CARD + 7, qr_value=QR, actor="secretaria")
    assert store.kicker.controllers == [school.id]
    assert (await delivery.drain_ledger(drain)).delivered == 2
    revoke = (await store.seed.all(LedgerEntry, LedgerEntry.command == "revoke"))[0]
    assert (revoke.card_value, revoke.qr_value) == (CARD, None)
    now = int(utcnow().timestamp())
    assert await _present(http, now, card_value=CARD) == "credential not registered"
    assert await _present(http, now, card_value=CARD + 7) == "granted"
    assert await _present(http, now, qrcode=QR) == "granted"

    # Revoking the person removes exactly its credentials, and with them its device user.
    async with store.sessions() as session, session.begin():
        await decide_person(session, person_id=person.id, decision="revoke", version=1,
                            at=utcnow(), actor="secretaria")
    assert (await delivery.drain_ledger(drain)).delivered == 1
    assert await _rows(http, "users") == []
    await http.aclose()


async def test_a_dropped_holder_frees_its_values_for_someone_else(store):
    school = await store.seed.school()
    async with store.sessions() as session, session.begin():
        await put_credential(session, school_id=school.id, holder_kind=SubjectKind.GUARDIAN,
                             holder_id=1, card_value=CARD, qr_value=None, at=utcnow())
    async with store.sessions() as session, session.begin():
        with pytest.raises(EsteiraError) as taken:
            await put_credential(session, school_id=school.id, holder_kind=SubjectKind.GUARDIAN,
                                 holder_id=2, card_value=CARD, qr_value=None, at=utcnow())
    assert taken.value.code == "pickup.credential-taken"
    async with store.sessions() as session, session.begin():
        assert await drop_credentials(session, holder_kind=SubjectKind.GUARDIAN,
                                      holder_id=1) == 1
        await put_credential(session, school_id=school.id, holder_kind=SubjectKind.GUARDIAN,
                             holder_id=2, card_value=CARD, qr_value=None, at=utcnow())
