"""A guardian's credential on the turnstile follows their links to the school's students."""

from __future__ import annotations

from datetime import timedelta

from activities.pickup.access import delete_expired_links
from activities.pickup.contracts.board import DrainBatchInput, Kind, Outbox
from activities.pickup.ledger import LedgerDelivery
from activities.pickup.models import LedgerEntry
from shared.db.models import utcnow
from tests.support.pickup import TURNSTILE_URL, simulated_turnstile

CARD, QR = 4_294_967_301, "qr-maria"


async def _present(http, **credential) -> str:
    answer = await http.post("/_sim/access", json={
        **credential, "at": int(utcnow().timestamp()), "turn": False})
    return answer.json()["reason"] if answer.json()["event"] != 13 else "granted"


async def _setup(store):
    _app, clients, http = simulated_turnstile()
    school = await store.seed.school(url=TURNSTILE_URL)
    delivery = LedgerDelivery(store.sessions, store.settings.pickup, clients)
    drain = DrainBatchInput(outbox=Outbox.LEDGER, key=school.id)
    return school, http, delivery, drain


async def _card(store, guardian, school, card=CARD, qr=None):
    return await store.pickup.credentials.set_guardian_credential(
        guardian_id=guardian.id, school_id=school.id, card_value=card, qr_value=qr,
        actor="secretaria")


async def _link(store, student, guardian, kind=Kind.PERMANENT, since=None, until=None):
    return await store.pickup.access.link_guardian(
        student_id=student.id, guardian_id=guardian.id, kind=kind, valid_from=since,
        valid_until=until, actor="secretaria")


async def _ledger(store) -> list[tuple]:
    return [(e.command, e.registration, e.card_value, e.qr_value, e.begin_time, e.end_time)
            for e in await store.seed.all(LedgerEntry)]


async def test_a_linked_guardian_card_is_granted_swapped_and_revoked_with_the_last_link(store):
    school, http, delivery, drain = await _setup(store)
    ana, bia = await store.seed.student(school), await store.seed.student(school, "Bia")
    maria = await store.seed.guardian()
    reg = f"guardian-{maria.id}"

    await _card(store, maria, school, qr=QR)
    assert await _ledger(store) == []  # no link to a student of the school: nothing to send
    assert store.kicker.controllers == []
    first = await _link(store, ana, maria)
    assert await _ledger(store) == [("grant", reg, CARD, QR, 0, 0)]
    assert store.kicker.controllers == [school.id]
    assert (await delivery.drain_ledger(drain)).delivered == 1
    assert await _present(http, card_value=CARD) == "granted"

    # A second link and the same credential again change nothing on the device.
    second = await _link(store, bia, maria)
    await _card(store, maria, school, qr=QR)
    assert len(await _ledger(store)) == 1
    assert store.kicker.controllers == [school.id]

    # A new card: exactly the old card is revoked, the QR code stays.
    await _card(store, maria, school, card=CARD + 7, qr=QR)
    assert (await _ledger(store))[1:] == [("revoke", reg, CARD, None, 0, 0),
                                          ("grant", reg, CARD + 7, QR, 0, 0)]
    assert (await delivery.drain_ledger(drain)).delivered == 2
    assert await _present(http, card_value=CARD) == "credential not registered"
    assert await _present(http, card_value=CARD + 7) == "granted"
    assert await _present(http, qrcode=QR) == "granted"

    # One link left at the school keeps the grant; the last one revokes it.
    await store.pickup.records.delete_link(link_id=first.id, actor="secretaria")
    assert len(await _ledger(store)) == 3
    await store.pickup.records.delete_link(link_id=second.id, actor="secretaria")
    assert (await _ledger(store))[3:] == [("revoke", reg, CARD + 7, QR, 0, 0)]
    assert (await delivery.drain_ledger(drain)).delivered == 1
    assert await _present(http, card_value=CARD + 7) == "credential not registered"
    assert await _present(http, qrcode=QR) == "credential not registered"
    assert store.kicker.controllers == [school.id] * 3
    await http.aclose()


async def test_only_temporary_links_give_the_latest_end_as_the_window(store):
    school, http, delivery, drain = await _setup(store)
    ana, bia = await store.seed.student(school), await store.seed.student(school, "Bia")
    other = await store.seed.student(await store.seed.school(), "Caio")
    maria = await store.seed.guardian()
    now = utcnow().replace(microsecond=0)
    since, soon, later = now - timedelta(hours=1), now + timedelta(hours=2), now + timedelta(
        days=2)
    await _card(store, maria, school)
    await _link(store, other, maria)  # another school's student gives no window here
    assert await _ledger(store) == []

    link = await _link(store, ana, maria, Kind.TEMPORARY, since, soon)
    await _link(store, bia, maria, Kind.TEMPORARY, since, later)
    assert [row[4:] for row in await _ledger(store)] == [
        (int(since.timestamp()), int(soon.timestamp())),
        (int(since.timestamp()), int(later.timestamp()))]
    assert (await delivery.drain_ledger(drain)).delivered == 2
    assert await _present(http, card_value=CARD) == "granted"

    # Made permanent, the window opens; nothing is revoked on the way.
    await store.pickup.records.update_link(
        link_id=link.id, revision=0, actor="secretaria",
        changes={"kind": Kind.PERMANENT, "valid_from": None, "valid_until": None})
    assert (await _ledger(store))[2:] == [("grant", f"guardian-{maria.id}", CARD, None, 0, 0)]
    await http.aclose()


async def test_deleting_the_guardian_revokes_what_the_turnstile_still_holds(store):
    school, http, delivery, drain = await _setup(store)
    ana = await store.seed.student(school)
    maria = await store.seed.guardian()
    until = utcnow() + timedelta(hours=1)
    await _card(store, maria, school, qr=QR)
    await _link(store, ana, maria, Kind.TEMPORARY, None, until)
    assert (await delivery.drain_ledger(drain)).delivered == 1
    # The cleanup sweep deletes the expired link; the grant is still on the ledger.
    async with store.sessions() as session, session.begin():
        gone = await delete_expired_links(session, now=until + timedelta(seconds=1),
                                          at=utcnow(), actor="sweep", limit=10)
    assert gone.changed == 1

    await store.pickup.records.delete_guardian(guardian_id=maria.id, actor="secretaria")
    assert (await _ledger(store))[1:] == [
        ("revoke", f"guardian-{maria.id}", CARD, QR, 0, 0)]
    assert (await delivery.drain_ledger(drain)).delivered == 1
    assert await _present(http, qrcode=QR) == "credential not registered"
    assert store.kicker.controllers == [school.id, school.id]
    await http.aclose()
