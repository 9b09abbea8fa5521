"""The gateway fetches the notice's order before its 200: the seed's fetch table at delivery."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
import pytest
import pytest_asyncio
from sqlalchemy import text, update
from sqlmodel import select

from activities.sisbajud.contracts.orders import AlarmCode, FetchStatus
from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudNotice,
    SisbajudOrder,
    SisbajudOutbox,
)
from activities.sisbajud.notices import settle_notice
from activities.sisbajud.operator import SisbajudOperations
from activities.sisbajud.store import record_notice
from services.simulators.hub.notice import build_notice, encode
from services.simulators.hub.sender import prepare_notice
from services.simulators.mensageria import create_app as mensageria_app
from services.webhook_gateway.app import WEBHOOK_PATH
from shared.db.models import OperationalEvent
from shared.temporal import TemporalHandle
from tests.api.sisbajud.conftest import (
    SECRET,
    MensageriaSim,
    face_for,
    gateway_client,
    no_temporal,
    on_mensageria,
)
from tests.support.ports import free_ports
from tests.support.sisbajud import World, new_order_id, serve, sisbajud_settings, stored

SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])
EVENT_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


async def _post(gateway: httpx.AsyncClient, order_id: str, msg_id: str) -> httpx.Response:
    # The Hub resends the same body under the same id: the event's time, not the attempt's.
    body = encode(build_notice(order_id, 1, occurred_at=EVENT_AT))
    notice = prepare_notice(SECRET, order_id, 1, msg_id=msg_id, body=body)
    return await gateway.post(WEBHOOK_PATH, content=notice.body, headers=notice.headers)


async def _rows(sessions, model) -> list:
    async with sessions() as session:
        return list((await session.exec(select(model))).all())


def _unavailable(response: httpx.Response) -> bool:
    return (response.status_code == 503 and bool(response.headers["Retry-After"])
            and response.json()["code"] == "mensageria.unavailable")


@SQLITE_ONLY
@pytest.mark.parametrize("fault", [
    {"kind": "status", "status": 503}, {"kind": "status", "status": 500},
    {"kind": "status", "status": 429},
    # One 401 is absorbed by a fresh token and a second try; a 401 that stays is a failure.
    {"kind": "status", "status": 401, "count": 2},
    # Slow but healthy: only the gateway's own deadline turns this into a 503.
    {"kind": "delay", "delay_s": 2.0}])
async def test_mensageria_failing_is_503_and_the_redelivery_is_recorded_once(
        gateway, sessions, mensageria, fault):
    order_id = new_order_id()
    mensageria.order(order_id)
    mensageria.fault(**fault)
    first = await _post(gateway, order_id, "msg_outage")
    assert _unavailable(first), first.text
    (notice,) = await _rows(sessions, SisbajudNotice)
    assert (notice.webhook_id, notice.state) == ("msg_outage", "ACCEPTED")  # on record already
    again = await _post(gateway, order_id, "msg_outage")
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    (notice,) = await _rows(sessions, SisbajudNotice)
    assert notice.state == "ACCEPTED" and await _rows(sessions, SisbajudAlarm) == []


async def test_network_refused_is_503_and_the_redelivery_is_recorded_once(
        settings, sessions, mensageria, face):
    order_id = new_order_id()
    mensageria.order(order_id)
    nowhere = on_mensageria(settings, f"http://127.0.0.1:{free_ports(1)[0]}")
    async with httpx.AsyncClient() as http, \
            gateway_client(face_for(nowhere, sessions, http)) as cut_off:
        first = await _post(cut_off, order_id, "msg_refused")
    assert _unavailable(first), first.text
    async with gateway_client(face) as gateway:
        again = await _post(gateway, order_id, "msg_refused")
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    (notice,) = await _rows(sessions, SisbajudNotice)
    assert notice.state == "ACCEPTED"


@SQLITE_ONLY
async def test_the_face_fetches_every_delivery_on_one_client_and_one_token(settings, sessions):
    # As `esteira webhook` composes it: no client given, so the face opens one and keeps it.
    app = mensageria_app()
    with serve(app) as url:
        sim = MensageriaSim(url)
        near = on_mensageria(settings, url)
        # Room for a token on each fetch, so only the count of token requests tells.
        near.sisbajud.webhook_fetch_timeout_seconds = 5.0
        face = SisbajudOperations(near, sessions, TemporalHandle(no_temporal))
        try:
            async with gateway_client(face) as gateway:
                for index in range(3):
                    order_id = new_order_id()
                    sim.order(order_id)
                    answer = await _post(gateway, order_id, f"msg_one_client_{index}")
                    assert answer.json()["status"] == "accepted", answer.text
            assert app.state.oauth.requests == 1
            await face.aclose()  # the client goes; a later fetch opens (and signs in) anew
            fetched = await face.deliveries.fetch(order_id)
            assert (fetched.status, app.state.oauth.requests) == (FetchStatus.FOUND, 2)
        finally:
            await face.aclose()
            sim.close()


@SQLITE_ONLY
async def test_a_notice_already_handed_on_is_not_fetched_again(gateway, sessions, mensageria):
    order_id = new_order_id()
    mensageria.order(order_id)
    assert (await _post(gateway, order_id, "msg_ingested")).json()["status"] == "accepted"
    async with sessions() as session:
        await session.exec(update(SisbajudNotice).values(state="INGESTED"))
        await session.commit()
    mensageria.fault(kind="status", status=503)
    again = await _post(gateway, order_id, "msg_ingested")
    # The order's workflow owns it now and fetches with its own retries: no 503, no fetch.
    assert again.status_code == 200 and again.json()["status"] == "duplicate"
    assert len(mensageria.faults()) == 1


async def test_other_4xx_parks_the_delivery_with_an_alarm(gateway, sessions, mensageria):
    for status in (400, 403, 422):
        order_id = new_order_id()
        mensageria.order(order_id)
        mensageria.fault(kind="status", status=status)
        for _ in range(2):  # a redelivery of a parked delivery neither fetches nor alarms
            response = await _post(gateway, order_id, f"msg_{status}")
            assert response.status_code == 200 and response.json()["status"] == "parked"
    notices = await _rows(sessions, SisbajudNotice)
    assert [n.state for n in notices] == ["PARKED"] * 3
    assert all(str(s) in n.reason for n, s in zip(notices, (400, 403, 422), strict=True))
    alarms = await _rows(sessions, SisbajudAlarm)
    assert [(a.code, a.webhook_id, a.order_id) for a in alarms] == [
        (AlarmCode.ORDER_FETCH_REJECTED.value, n.webhook_id, n.order_id) for n in notices]
    events = await _rows(sessions, OperationalEvent)
    assert [e.type for e in events] == [AlarmCode.ORDER_FETCH_REJECTED.value] * 3


@SQLITE_ONLY
async def test_an_order_that_cannot_run_parks_the_delivery_as_invalid(
        gateway, sessions, mensageria):
    order_id = new_order_id()
    mensageria.order(order_id, operation="CONFISCO")
    response = await _post(gateway, order_id, "msg_invalid")
    assert response.status_code == 200 and response.json()["status"] == "parked"
    (alarm,) = await _rows(sessions, SisbajudAlarm)
    assert (alarm.code, alarm.order_id) == (AlarmCode.ORDER_INVALID.value, order_id)


async def test_a_store_failure_after_the_fetch_is_503_and_half_of_nothing_is_written(
        gateway, sessions, mensageria):
    order_id = new_order_id()
    mensageria.order(order_id)
    mensageria.fault(kind="status", status=403, count=2)
    # The alarm can't be written: the notice's move to PARKED must roll back with it.
    async with sessions() as session:
        await session.exec(text("ALTER TABLE sisbajud_alarms RENAME TO sisbajud_alarms_away"))
        await session.commit()
    first = await _post(gateway, order_id, "msg_half")
    assert first.status_code == 503 and first.json()["code"] == "store.unavailable"
    async with sessions() as session:
        await session.exec(text("ALTER TABLE sisbajud_alarms_away RENAME TO sisbajud_alarms"))
        await session.commit()
    (notice,) = await _rows(sessions, SisbajudNotice)
    assert (notice.state, notice.reason) == ("ACCEPTED", None)
    assert await _rows(sessions, SisbajudAlarm) == []
    assert await _rows(sessions, OperationalEvent) == []
    again = await _post(gateway, order_id, "msg_half")
    assert again.status_code == 200 and again.json()["status"] == "parked"
    assert len(await _rows(sessions, SisbajudAlarm)) == 1


async def test_the_tick_taking_the_notice_first_wins_over_the_gateway(sessions):
    async with sessions() as session:
        await record_notice(session, webhook_id="msg_raced", order_id="o-1", revision=1,
                            parked_reason=None, body=b"{}", skew_s=0, skewed=False,
                            secret_index=0)
        await session.exec(update(SisbajudNotice).values(state="INGESTED"))
        await session.commit()
        moved = await settle_notice(session, "msg_raced", state="PARKED", reason="403",
                                    order_id="o-1", alarm=AlarmCode.ORDER_FETCH_REJECTED)
    assert not moved
    (notice,) = await _rows(sessions, SisbajudNotice)
    assert notice.state == "INGESTED" and await _rows(sessions, SisbajudAlarm) == []


@SQLITE_ONLY
async def test_an_overlong_webhook_id_is_settled_under_its_stored_key(
        gateway, sessions, mensageria):
    order_id = new_order_id()
    mensageria.withdraw(order_id, 410)
    response = await _post(gateway, order_id, "msg_" + "w" * 400)
    assert response.json()["status"] == "withdrawn"
    (notice,) = await _rows(sessions, SisbajudNotice)
    assert notice.webhook_id.startswith("sha256:") and notice.state == "WITHDRAWN"


@pytest_asyncio.fixture
async def world(settings, task_queue):
    """Simulators, store and worker helpers; the gateway reaches this Mensageria on loopback."""
    world = await World(sisbajud_settings(settings, task_queue)).start()
    try:
        yield world
    finally:
        await world.close()


@SQLITE_ONLY
async def test_a_withdrawn_order_is_200_and_nothing_reaches_the_ledger(world, temporal_env):
    gone = {404: new_order_id(), 410: new_order_id()}
    live = new_order_id()
    await world.account("@w-1", "100")
    for status, order_id in gone.items():
        await world.order(order_id)
        await world.mensageria.post(f"/_sim/orders/{order_id}/withdraw", json={"status": status})
    await world.order(live, amount="5")
    with serve(world.mensageria_app) as url:
        async with httpx.AsyncClient() as http, gateway_client(face_for(
                on_mensageria(world.settings, url), world.sessions, http)) as gateway:
            answers = [(await _post(gateway, order_id, f"msg_{status}")).json()["status"]
                       for status, order_id in gone.items()]
            accepted = await _post(gateway, live, "msg_live")
    assert answers == ["withdrawn", "withdrawn"] and accepted.json()["status"] == "accepted"
    async with world.worker(temporal_env.client):
        tick = await world.tick(temporal_env.client)
        assert tick.stages[0].done == 1  # only the live order was handed on
        for _ in range(100):  # the final result, not the ACCEPTED progress row
            if any(r.payload.get("executionState") == "RESOLVED"
                   for r in await stored(world, SisbajudOutbox, order_id=live)):
                break
            await asyncio.sleep(0.1)
    notices = {n.order_id: n for n in await _rows(world.sessions, SisbajudNotice)}
    for status, order_id in gone.items():
        assert notices[order_id].state == "WITHDRAWN" and str(status) in notices[order_id].reason
    # The live order reached the ledger; the withdrawn ones wrote nothing anywhere.
    transactions = await world.transactions()
    assert len(transactions) == 1 and not any(o in str(transactions) for o in gone.values())
    assert [o.order_id for o in await _rows(world.sessions, SisbajudOrder)] == [live]
    assert await _rows(world.sessions, SisbajudAlarm) == []
