"""The Hub simulator redelivers on 5xx, 429 and timeouts until the gateway takes the notice."""

from __future__ import annotations

import time

import httpx
import pytest
import pytest_asyncio
from sqlalchemy.exc import OperationalError

from activities.sisbajud.models import SisbajudNotice, SisbajudOrder
from services.simulators.hub.redelivery import RETRY_SCHEDULE, deliver
from services.webhook_gateway.app import WEBHOOK_PATH, GatewayDeps, create_app
from services.webhook_gateway.signature import StandardWebhooksV1
from tests.api.sisbajud.conftest import MAX_SKEW_S, SECRET, face_for
from tests.support.sisbajud import World, new_order_id, sisbajud_settings, stored

URL = f"http://gateway{WEBHOOK_PATH}"
SCALE = 0.001


class FakeTime:
    """A clock the sender's waits advance; `before_attempt` runs as each wait ends."""

    def __init__(self, before_attempt=None) -> None:
        self.now = time.time()
        self.waits: list[float] = []
        self._before = before_attempt or (lambda number: None)

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += 1  # a new second: a new timestamp, still within the gateway's skew
        self._before(len(self.waits) + 1)


def _answering(*statuses: int) -> httpx.AsyncClient:
    """A client on a stand-in gateway answering `statuses` in turn (then 200)."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(statuses[len(seen) - 1] if len(seen) <= len(statuses) else 200)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    client.seen = seen  # type: ignore[attr-defined]
    return client


async def test_5xx_429_and_timeouts_are_retried_on_the_schedule_with_one_webhook_id():
    clock = FakeTime()
    async with _answering(503, 429, 500) as client:
        delivery = await deliver(URL, SECRET, new_order_id(), 1, client=client, scale=SCALE,
                                 sleep=clock.sleep, clock=clock.clock)
        requests = client.seen  # type: ignore[attr-defined]
    assert delivery.delivered and [a.status for a in delivery.attempts] == [503, 429, 500, 200]
    assert clock.waits == pytest.approx([5 * SCALE, 300 * SCALE, 1800 * SCALE])
    assert {r.headers["webhook-id"] for r in requests} == {delivery.msg_id}
    assert len({r.content for r in requests}) == 1  # the same body every time
    # Each attempt is signed afresh over its own timestamp.
    assert len({r.headers["webhook-timestamp"] for r in requests}) == 4
    assert len({r.headers["webhook-signature"] for r in requests}) == 4


async def test_a_final_answer_stops_and_eight_failures_give_up():
    clock = FakeTime()
    async with _answering(401) as client:
        refused = await deliver(URL, SECRET, new_order_id(), 1, client=client, scale=SCALE,
                                sleep=clock.sleep, clock=clock.clock)
    assert [a.status for a in refused.attempts] == [401] and not refused.delivered
    async with _answering(*[503] * 20) as client:
        given_up = await deliver(URL, SECRET, new_order_id(), 1, client=client, scale=SCALE,
                                 sleep=clock.sleep, clock=clock.clock)
    assert len(given_up.attempts) == len(RETRY_SCHEDULE) == 8 and not given_up.delivered


class FlakyStore:
    """The store's session factory, refusing to open while `down`."""

    def __init__(self, sessions) -> None:
        self._sessions = sessions
        self.down = False

    def __call__(self):
        if self.down:
            raise OperationalError("connect", None, OSError("database is down"))
        return self._sessions()


class LosingAnswers(httpx.AsyncBaseTransport):
    """The gateway's transport; while `lose` is set, the answer never reaches the Hub."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner
        self.lose = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if self.lose:
            await response.aread()
            raise httpx.ReadTimeout("answer lost", request=request)
        return response


@pytest_asyncio.fixture
async def world(settings, task_queue):
    """Simulators, store and worker helpers, with the gateway in process."""
    world = await World(sisbajud_settings(settings, task_queue)).start()
    try:
        yield world
    finally:
        await world.close()


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_503s_and_a_lost_answer_end_in_one_notice_and_one_order(world, temporal_env):
    order_id = new_order_id()
    await world.account("@hub-1", "100")
    await world.order(order_id, amount="7")
    # First attempt: the Mensageria is down.
    (await world.mensageria.post("/_sim/faults", json={
        "route": "orders.get", "kind": "status", "status": 503})).raise_for_status()
    store = FlakyStore(world.sessions)
    app = create_app(GatewayDeps(StandardWebhooksV1([SECRET], max_skew_s=MAX_SKEW_S),
                                 face_for(world.settings, store, world.http)))
    transport = LosingAnswers(httpx.ASGITransport(app=app))

    def before_attempt(number: int) -> None:
        store.down = number == 2          # second: the store is down
        transport.lose = number == 3      # third: recorded, but the answer is lost
        # fourth: everything is back

    clock = FakeTime(before_attempt)
    async with httpx.AsyncClient(transport=transport) as hub:
        delivery = await deliver(URL, SECRET, order_id, 1, client=hub, scale=SCALE,
                                 sleep=clock.sleep, clock=clock.clock)
    codes = [(a.status, a.detail) for a in delivery.attempts]
    assert [s for s, _ in codes] == [503, 503, None, 200], codes
    assert '"mensageria.unavailable"' in codes[0][1] and '"store.unavailable"' in codes[1][1]
    assert "ReadTimeout" in codes[2][1] and '"duplicate"' in codes[3][1]
    (notice,) = await stored(world, SisbajudNotice)
    assert (notice.webhook_id, notice.state) == (delivery.msg_id, "ACCEPTED")
    async with world.worker(temporal_env.client):
        tick = await world.tick(temporal_env.client)
        assert tick.stages[0].done == 1
        await world.until_state(order_id, "RESOLVED")
    (order,) = await stored(world, SisbajudOrder)
    assert order.order_id == order_id
    assert len(await stored(world, SisbajudNotice)) == 1
    assert len(await world.transactions()) == 1
