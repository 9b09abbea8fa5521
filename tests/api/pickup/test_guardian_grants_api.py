"""Through the doors: links, the roster and deletions keep a guardian's card on the turnstile."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from activities.pickup.models import LedgerEntry

P = "/api/pickup"
CARD = 987_654
CPF = "52998224725"


async def _ledger(api) -> list[tuple]:
    return [(e.command, e.registration, e.card_value, e.end_time)
            for e in await api.seed.all(LedgerEntry)]


async def test_link_edits_the_roster_and_deletion_move_the_guardian_grant(pickup_api):
    api = pickup_api
    school = await api.ok("POST", f"{P}/schools", json={"name": "Um"})
    ana = await api.ok("POST", f"{P}/students", json={
        "schoolId": school["id"], "name": "Ana", "registration": "A1"})
    maria = await api.ok("POST", f"{P}/guardians", json={
        "name": "Maria", "cpf": CPF, "schoolId": school["id"], "cardValue": CARD})
    reg = f"guardian-{maria['id']}"
    assert await _ledger(api) == []

    link = await api.ok("POST", f"{P}/links", json={
        "studentId": ana["id"], "guardianId": maria["id"], "kind": "permanent"})
    assert await _ledger(api) == [("grant", reg, CARD, 0)]

    until = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0)
    await api.ok("PATCH", f"{P}/links/{link['id']}", json={
        "revision": 0, "kind": "temporary", "validUntil": until.isoformat()})
    assert (await _ledger(api))[1:] == [("grant", reg, CARD, int(until.timestamp()))]

    assert (await api.http.delete(f"{P}/links/{link['id']}")).status_code == 204
    assert (await _ledger(api))[2:] == [("revoke", reg, CARD, 0)]

    # The roster links her again: granted again, and a same-file re-import changes nothing.
    csv = f"student_registration;guardian_cpf;link_kind\nA1;{CPF};permanent\n"
    for _ in range(2):
        await api.ok("POST", f"{P}/schools/{school['id']}/roster", content=csv,
                     headers={"Content-Type": "text/csv"})
    assert (await _ledger(api))[3:] == [("grant", reg, CARD, 0)]

    [relinked] = (await api.ok("GET", f"{P}/links"))["items"]
    assert (await api.http.delete(f"{P}/links/{relinked['id']}")).status_code == 204
    assert (await api.http.delete(f"{P}/guardians/{maria['id']}")).status_code == 204
    assert [row[0] for row in await _ledger(api)] == ["grant", "grant", "revoke", "grant",
                                                      "revoke"]
