"""The tick hands notices over and sends results many at a time, keeping each order's order."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any

import httpx

from activities.sisbajud.contracts.orders import TickInput, order_workflow_id
from activities.sisbajud.models import SisbajudNotice, SisbajudOutbox
from activities.sisbajud.tick import TickActivities
from shared.db.models import utcnow
from tests.support.sisbajud import new_order_id, stored

# Long enough for any loaded machine; the calls only wait this long when they are serial.
DEADLINE = 20.0


class Crowd:
    """Calls that block until `expected` of them are in flight at once (fails if never)."""

    def __init__(self, expected: int, fail_for: Collection[str] = frozenset()) -> None:
        self.expected, self.fail_for = expected, fail_for
        self.in_flight = self.peak = 0
        self.calls: list[tuple[str, Any]] = []
        self._crowded = asyncio.Event()

    async def arrive(self, key: str, detail: Any) -> None:
        self.calls.append((key, detail))
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.in_flight >= self.expected:
            self._crowded.set()
        try:
            await asyncio.wait_for(self._crowded.wait(), DEADLINE)
        finally:
            self.in_flight -= 1
        if key in self.fail_for:
            raise RuntimeError(f"refused {key}")


class FakeTemporal:
    """`start_workflow` through a `Crowd`, keyed by the order's workflow id."""

    def __init__(self, crowd: Crowd) -> None:
        self.crowd, self.namespace = crowd, "default"

    async def start_workflow(self, workflow: str, arg: Any, **options: Any) -> None:
        await self.crowd.arrive(options["id"], options["start_signal_args"][0].revision)


class FakeMensageria:
    """`post_result` through a `Crowd`, keyed by order; answers 202."""

    def __init__(self, crowd: Crowd) -> None:
        self.crowd = crowd

    async def post_result(self, order_id: str, key: str, payload: dict) -> httpx.Response:
        await self.crowd.arrive(order_id, key)
        return httpx.Response(202, request=httpx.Request("POST", "http://mensageria"))


def _stage(world, crowd: Crowd) -> TickActivities:
    temporal = FakeTemporal(crowd)

    async def provider():
        return temporal

    return TickActivities(world.settings, world.sessions, world.http, provider)


async def _notices(world, *pairs: tuple[str, int]) -> None:
    async with world.sessions() as session:
        for order_id, revision in pairs:
            session.add(SisbajudNotice(webhook_id=f"{order_id}:{revision}", received_at=utcnow(),
                                       order_id=order_id, revision=revision, state="ACCEPTED"))
        await session.commit()


async def test_ingest_hands_orders_over_at_once_each_in_revision_order(world):
    a, b, c = (new_order_id() for _ in range(3))
    await _notices(world, (a, 1), (b, 1), (a, 2), (c, 1))
    crowd = Crowd(expected=3)

    result = await _stage(world, crowd).ingest(TickInput())

    assert (result.ok, result.done, result.failed) == (True, 4, 0)
    assert crowd.peak == 3  # three orders at once; never two notices of one order
    assert [rev for key, rev in crowd.calls if key.endswith(a)] == [1, 2]
    notices = await stored(world, SisbajudNotice)
    assert {n.state for n in notices} == {"INGESTED"}
    assert all(n.ingested_at is not None for n in notices)


async def test_one_refused_notice_leaves_its_order_waiting_and_the_others_handed_over(world):
    a, b, c = (new_order_id() for _ in range(3))
    await _notices(world, (a, 1), (b, 1), (a, 2), (c, 1))
    crowd = Crowd(expected=3, fail_for={order_workflow_id(a)})

    result = await _stage(world, crowd).ingest(TickInput())

    assert (result.ok, result.done, result.failed) == (False, 2, 2)
    # Revision 2 of the refused order is not handed over before revision 1.
    assert [rev for key, rev in crowd.calls if key.endswith(a)] == [1]
    states = {(n.order_id, n.revision): n.state for n in await stored(world, SisbajudNotice)}
    assert states == {(a, 1): "ACCEPTED", (a, 2): "ACCEPTED", (b, 1): "INGESTED",
                      (c, 1): "INGESTED"}


async def test_drain_sends_orders_at_once_each_in_queue_order_and_records_them(world):
    a, b = new_order_id(), new_order_id()
    now = utcnow()
    async with world.sessions() as session:
        for order_id, n in ((a, 1), (b, 1), (a, 2)):
            session.add(SisbajudOutbox(idempotency_key=f"{order_id}:{n}", order_id=order_id,
                                       revision=1, payload={"n": n}, state="PENDING",
                                       created_at=now, next_attempt_at=now))
        await session.commit()
    crowd = Crowd(expected=2)
    stage = _stage(world, crowd)
    stage._sender._mensageria = FakeMensageria(crowd)  # type: ignore[assignment]

    result = await stage.drain(TickInput())

    assert (result.done, result.failed) == (3, 0)
    assert crowd.peak == 2
    assert [key for order, key in crowd.calls if order == a] == [f"{a}:1", f"{a}:2"]
    rows = await stored(world, SisbajudOutbox)
    assert {(r.state, r.attempts, r.last_status) for r in rows} == {("SENT", 1, 202)}
