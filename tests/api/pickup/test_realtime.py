"""Over real HTTP: SSE with Last-Event-ID catch-up, and the turnstile's exit push."""

from __future__ import annotations

import asyncio

import httpx

from activities.pickup.contracts.board import DrainBatchInput, Outbox
from activities.pickup.ledger import LedgerDelivery
from activities.pickup.models import LedgerEntry, Student
from activities.pickup.turnstile_client import TurnstileClients
from services.simulators.turnstile import TurnstileSimSettings, create_app
from tests.support.pickup import API_KEY, serve

KEY = {"X-API-Key": API_KEY}


async def _read(http: httpx.AsyncClient, url: str, count: int, *, headers=None,
                when_open=None) -> list[dict]:
    """`count` events from an SSE stream; `when_open` runs once the stream is established."""
    events, current = [], {}
    async with asyncio.timeout(10), http.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith("retry:") and when_open is not None:
                await when_open()
            elif line.startswith(("id:", "event:", "data:")):
                key, _, value = line.partition(": ")
                current[key] = value
            elif line == "" and "id" in current:
                events.append(current)
                current = {}
                if len(events) == count:
                    return events
    return events


async def test_board_stream_reconnects_with_last_event_id_and_catches_up(pickup_api):
    api = pickup_api
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    student = await api.ok("POST", "/api/pickup/students",
                           json={"schoolId": school["id"], "name": "Ana"})
    sid, feed = student["id"], f"/api/pickup/schools/{school['id']}/board/events"
    async with serve(api.app) as base, httpx.AsyncClient(base_url=base, headers=KEY) as http:
        async def arrive() -> None:
            await api.ok("POST", f"/api/pickup/students/{sid}/arrival")

        [first] = await _read(http, feed, 1, when_open=arrive)
        assert first["event"] == "StudentStateChanged" and '"to": "AWAITING"' in first["data"]

        # Disconnected: two transitions happen meanwhile.
        await api.ok("POST", f"/api/pickup/students/{sid}/ready", json={"version": 1})
        await api.ok("POST", f"/api/pickup/students/{sid}/pickup", json={"version": 2})

        missed = await _read(http, feed, 2, headers={"Last-Event-ID": first["id"]})
        assert [int(e["id"]) for e in missed] == [int(first["id"]) + 1, int(first["id"]) + 2]
        assert ['"to": "READY"' in missed[0]["data"], '"to": "PICKED_UP"' in missed[1]["data"]] \
            == [True, True]


async def test_guardian_stream_carries_only_their_students_and_roster(pickup_api):
    api = pickup_api
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    mine, other = [await api.ok("POST", "/api/pickup/students",
                                json={"schoolId": school["id"], "name": n}) for n in "AB"]
    guardian = await api.ok("POST", "/api/pickup/guardians", json={"name": "Maria"})
    await api.ok("POST", "/api/pickup/links", json={
        "studentId": mine["id"], "guardianId": guardian["id"], "kind": "permanent"})
    token = (await api.ok("POST", f"/api/pickup/guardians/{guardian['id']}/tokens",
                          json={}))["token"]
    await api.ok("POST", f"/api/pickup/students/{other['id']}/arrival")
    await api.ok("POST", f"/api/pickup/students/{mine['id']}/arrival")
    async with serve(api.app) as base, httpx.AsyncClient(base_url=base) as http:
        events = await _read(http, "/api/pickup/guardian/events?after=0", 2,
                             headers={"Authorization": f"Bearer {token}"})
    assert [e["event"] for e in events] == ["StudentRosterChanged", "StudentStateChanged"]
    assert all(f'"studentId": {mine["id"]}' in e["data"] for e in events)


async def test_turnstile_exit_push_picks_up_the_ready_student(pickup_api):
    api = pickup_api
    sim = create_app(TurnstileSimSettings(push_retry_delay_seconds=0.1))
    async with serve(api.app) as base, serve(sim) as turnstile, \
            httpx.AsyncClient() as http:
        school = await api.ok("POST", "/api/pickup/schools",
                              json={"name": "Escola", "turnstileUrl": turnstile})
        sid = (await api.ok("POST", "/api/pickup/students",
                            json={"schoolId": school["id"], "name": "Ana",
                                  "cardValue": 7_000_001}))["id"]
        await api.ok("POST", f"/api/pickup/schools/{school['id']}/turnstile/monitor",
                     json={"publicBaseUrl": base})
        await api.ok("POST", f"/api/pickup/students/{sid}/arrival")
        await api.ok("POST", f"/api/pickup/students/{sid}/ready", json={"version": 1})
        clients = TurnstileClients(http, login="admin", password="admin", timeout=5)
        delivery = LedgerDelivery(api.context.sessions, api.context.settings.pickup, clients)
        delivered = await delivery.drain_ledger(DrainBatchInput(outbox=Outbox.LEDGER,
                                                                key=school["id"]))
        assert delivered.delivered == 1

        passage = await http.post(f"{turnstile}/_sim/access", json={"card_value": 7_000_001})
        assert passage.json()["result"] == "granted"
        await http.post(f"{turnstile}/_sim/deliveries/flush")

    student = await api.seed.get(Student, sid)
    assert (student.state, student.state_reason) == ("PICKED_UP", "saída na catraca")
    entries = await api.seed.all(LedgerEntry)
    assert [(e.command, e.status) for e in entries] == [("grant", "confirmed"),
                                                        ("revoke", "pending")]
