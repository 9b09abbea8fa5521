"""Credentials unique per school, and each school's own Monitor token."""

from __future__ import annotations

from urllib.parse import urlsplit

from activities.pickup.models import Credential, School
from services.simulators.turnstile import TurnstileSimSettings, create_app
from tests.support.pickup import MONITOR_TOKEN, serve

CARD = 123456


async def _school(api, name: str, **extra) -> dict:
    return await api.ok("POST", "/api/pickup/schools", json={"name": name, **extra})


async def _person(api, school: dict, **credential):
    student = await api.ok("POST", "/api/pickup/students",
                           json={"schoolId": school["id"], "name": "Ana"})
    return await api.http.post("/api/pickup/authorized-persons", json={
        "studentId": student["id"], "name": "Tia", "kind": "permanent", **credential})


async def test_a_card_or_qr_is_unique_within_a_school_only(pickup_api):
    api = pickup_api
    one, two = await _school(api, "Um"), await _school(api, "Dois")
    first = await _person(api, one, cardValue=CARD, qrValue="qr-1")
    assert first.status_code == 201

    taken = await _person(api, one, cardValue=CARD)
    assert (taken.status_code, taken.json()["code"]) == (409, "pickup.credential-taken")
    guardian = await api.http.post("/api/pickup/guardians", json={
        "name": "Maria", "schoolId": one["id"], "qrValue": "qr-1"})
    assert (guardian.status_code, guardian.json()["code"]) == (409, "pickup.credential-taken")
    elsewhere = await _person(api, two, cardValue=CARD, qrValue="qr-1")
    assert elsewhere.status_code == 201
    # The refused creations left nothing behind.
    assert await api.seed.count(Credential) == 2

    maria = await api.ok("POST", "/api/pickup/guardians", json={
        "name": "Maria", "schoolId": one["id"], "cardValue": CARD + 1})
    no_school = await api.http.post("/api/pickup/guardians",
                                    json={"name": "João", "cardValue": CARD + 2})
    assert (no_school.status_code, no_school.json()["code"]) == (422, "request.invalid")

    # Setting a credential later follows the same rule; a holder may keep its own value.
    path = f"/api/pickup/guardians/{maria['id']}/credential"
    clash = await api.http.put(path, json={"schoolId": one["id"], "cardValue": CARD})
    assert (clash.status_code, clash.json()["code"]) == (409, "pickup.credential-taken")
    again = await api.ok("PUT", path, json={"schoolId": one["id"], "cardValue": CARD + 1,
                                            "qrValue": "qr-maria"})
    assert (again["cardValue"], again["qrValue"]) == (CARD + 1, "qr-maria")
    person_id = first.json()["id"]
    swapped = await api.ok("PUT", f"/api/pickup/authorized-persons/{person_id}/credential",
                           json={"qrValue": "qr-2"})
    assert (swapped["cardValue"], swapped["qrValue"]) == (None, "qr-2")
    empty = await api.http.put(f"/api/pickup/authorized-persons/{person_id}/credential",
                               json={})
    assert empty.status_code == 422


async def test_each_school_has_its_own_monitor_token(pickup_api):
    api = pickup_api
    sim = create_app(TurnstileSimSettings())
    async with serve(sim) as turnstile:
        one = await _school(api, "Um", turnstileUrl=turnstile)
        two = await _school(api, "Dois", turnstileUrl=turnstile)
        tokens = {}
        for school in (one, two):
            target = await api.context.faces.pickup.monitor.configure(
                school_id=school["id"], public_base_url="http://esteira", actor="test")
            tokens[school["id"]] = urlsplit(str(target)).path.rsplit("/", 1)[1]
    await sim.state.device.monitor.aclose()
    stored = await api.seed.get(School, one["id"])
    assert stored.monitor_token_hash and tokens[one["id"]] not in stored.monitor_token_hash

    def push(school: dict, token: str):
        return api.http.post(f"/api/pickup/turnstile/monitor/{school['id']}/{token}/dao",
                             json={}, headers={"X-API-Key": ""})

    assert (await push(one, tokens[one["id"]])).status_code == 200
    assert (await push(two, tokens[two["id"]])).status_code == 200
    # School one's controller pushing to school two's path.
    wrong = await push(two, tokens[one["id"]])
    assert (wrong.status_code, wrong.json()["code"]) == (403, "pickup.monitor-wrong-school")
    alive = await api.http.post(
        f"/api/pickup/turnstile/monitor/{two['id']}/{tokens[one['id']]}/device_is_alive",
        json={})
    assert (alive.status_code, alive.json()["code"]) == (403, "pickup.monitor-wrong-school")
    # Once a school has its own token, the deployment-wide one no longer opens it.
    legacy = await push(one, MONITOR_TOKEN)
    assert (legacy.status_code, legacy.json()["code"]) == (401, "pickup.monitor-unauthorized")
    guess = await push(one, "guess")
    assert (guess.status_code, guess.json()["code"]) == (401, "pickup.monitor-unauthorized")


async def test_a_deleted_holder_frees_its_card_at_the_school(pickup_api):
    api = pickup_api
    school = await _school(api, "Um")
    maria = await api.ok("POST", "/api/pickup/guardians", json={
        "name": "Maria", "schoolId": school["id"], "cardValue": CARD})
    person = (await _person(api, school, qrValue="qr-tia")).json()

    assert (await api.http.delete(f"/api/pickup/guardians/{maria['id']}")).status_code == 204
    assert (await api.http.delete(
        f"/api/pickup/authorized-persons/{person['id']}")).status_code == 204

    reused = await _person(api, school, cardValue=CARD, qrValue="qr-tia")
    assert reused.status_code == 201
