"""The live stream: commit order on PostgreSQL, one poll per process, bounded slow streams."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import httpx
import pytest
import pytest_asyncio
from sqlalchemy import event

from activities.pickup.models import BoardEvent, Guardian, GuardianLink
from services.pickup_stream.hub import StreamHub
from shared.db.engine import create_engine, session_factory
from shared.settings import Settings
from tests.support.pickup import API_KEY, RecordingKicker, Seed, recording_face, serve

STATE = "StudentStateChanged"


async def _until(condition, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


class Reader:
    """One open stream consumed into a list, as the SSE route consumes it."""

    def __init__(self, hub: StreamHub, feed, last_id: int | None = None,
                 *, start: bool = True) -> None:
        self.rows: list[BoardEvent] = []
        self.stream = hub.stream(feed, last_id, keepalive=3600)
        self.task = asyncio.create_task(self._run()) if start else None

    async def _run(self) -> None:
        async for row in self.stream:
            if row is not None:
                self.rows.append(row)

    @property
    def writers(self) -> list[str]:
        return [r.payload["writer"] for r in self.rows]


class Store:
    """The hub's engine (its queries are counted) and a writer engine beside it."""

    def __init__(self, url: str) -> None:
        self.engine = create_engine(url)
        self.writer_engine = create_engine(url)
        self.sessions = session_factory(self.engine)
        self.pickup = recording_face(Settings(database_url=url), self.sessions,
                                     RecordingKicker())
        self.writers = session_factory(self.writer_engine)
        self.seed = Seed(self.writers)
        self.queries = 0
        event.listen(self.engine.sync_engine, "before_cursor_execute", self._count)

    def _count(self, *_args) -> None:
        self.queries += 1

    def hub(self, **kwargs) -> StreamHub:
        return StreamHub(self.pickup, poll_seconds=3600, run_poller=False, **kwargs)

    async def write(self, school, student, writer: str) -> BoardEvent:
        row = _event(school, student, writer)
        await self.seed.add(row)
        return row


def _event(school, student, writer: str) -> BoardEvent:
    return BoardEvent(type=STATE, school_id=school.id, student_id=student.id,
                      payload={"writer": writer})


@pytest_asyncio.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    opened = Store(database_url)
    try:
        yield opened
    finally:
        await opened.engine.dispose()
        await opened.writer_engine.dispose()


async def _close(*readers: Reader) -> None:
    tasks = [r.task for r in readers if r.task is not None]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
async def test_a_commit_after_a_higher_id_was_served_is_not_lost(store):
    school = await store.seed.school()
    student = await store.seed.student(school)
    hub = store.hub()
    board = Reader(hub, store.pickup.feeds.school_feed(school.id))
    await _until(lambda: hub.subscribers == 1, "the stream to join")

    async with store.writers() as slow:
        await slow.begin()
        late = _event(school, student, "A")
        slow.add(late)
        await slow.flush()  # writer A holds its id, uncommitted
        early = await store.write(school, student, "B")
        assert early.id > late.id

        await hub.poll_once()
        await _until(lambda: board.writers == ["B"], "B to be served")
        await slow.commit()  # A commits after B's higher id was served

    await hub.poll_once()
    await _until(lambda: len(board.rows) == 2, "A to be served")
    # Documented order: commit order (B, then A), each SSE id above the one before.
    assert board.writers == ["B", "A"]
    assert board.rows[0].seq < board.rows[1].seq

    # A client that saw B reconnects with Last-Event-ID: it gets A, not a gap.
    replay = Reader(hub, store.pickup.feeds.school_feed(school.id), last_id=board.rows[0].seq)
    await _until(lambda: replay.writers == ["A"], "the replay to reach A")

    # An id taken by a transaction that rolls back leaves a hole nobody waits for.
    async with store.writers() as doomed:
        await doomed.begin()
        doomed.add(_event(school, student, "rolled back"))
        await doomed.flush()
        await store.write(school, student, "C")
        await doomed.rollback()
    await hub.poll_once()
    await _until(lambda: board.writers == ["B", "A", "C"], "C to be served")
    assert replay.writers == ["A", "C"]
    await _close(board, replay)


async def _queries_for_three_polls(store: Store, pairs: int) -> int:
    """Queries the hub's engine runs for 3 polls with events and 1 idle, with 2*pairs streams."""
    school = await store.seed.school()
    student = await store.seed.student(school)
    guardians = await store.seed.add(*[Guardian(name=f"G{i}") for i in range(pairs)])
    guardians = guardians if isinstance(guardians, tuple) else (guardians,)
    await store.seed.add(*[GuardianLink(student_id=student.id, guardian_id=g.id,
                                        kind="permanent") for g in guardians])
    hub = store.hub()
    readers = [Reader(hub, store.pickup.feeds.school_feed(school.id)) for _ in range(pairs)]
    readers += [Reader(hub, store.pickup.feeds.guardian_feed(g.id)) for g in guardians]
    await _until(lambda: hub.subscribers == 2 * pairs, "every stream to join")

    before = store.queries
    for round_ in range(3):
        await store.write(school, student, f"round {round_}")
        assert await hub.poll_once() == 1
        await _until(lambda n=round_ + 1: all(len(r.rows) == n for r in readers),
                     "every stream to get the event")
    assert await hub.poll_once() == 0
    queries = store.queries - before
    await _close(*readers)
    await _until(lambda: hub.subscribers == 0, "every stream to leave")
    return queries


async def test_one_poll_serves_500_streams_with_the_queries_of_one(store):
    one = await _queries_for_three_polls(store, 1)
    many = await _queries_for_three_polls(store, 250)
    # Per poll: the new events, plus the links of the guardian streams' students when there
    # are events; never a query per stream.
    assert one == many == 3 * 2 + 1


async def test_a_slow_stream_holds_a_bounded_buffer_and_catches_up_from_the_table(store):
    school = await store.seed.school()
    student = await store.seed.student(school)
    hub = store.hub(buffer=3)
    slow = Reader(hub, store.pickup.feeds.school_feed(school.id), start=False)
    first = asyncio.create_task(anext(slow.stream))  # joined, then stuck on its first event
    await _until(lambda: hub.subscribers == 1, "the stream to join")

    for n in range(10):
        await store.write(school, student, str(n))
    await hub.poll_once()
    [sub] = [s for subs in hub._by_key.values() for s in subs]
    assert len(sub.buffer) <= 3 and sub.lagging

    slow.rows.append(await first)
    while len(slow.rows) < 10:
        slow.rows.append(await anext(slow.stream))
    assert slow.writers == [str(n) for n in range(10)]
    await slow.stream.aclose()
    assert hub.subscribers == 0


async def test_closing_the_hub_ends_its_streams(store):
    school = await store.seed.school()
    hub = store.hub()
    board = Reader(hub, store.pickup.feeds.school_feed(school.id))
    await _until(lambda: hub.subscribers == 1, "the stream to join")
    await hub.close()
    await asyncio.wait_for(board.task, 10)
    assert hub.subscribers == 0


async def test_a_disconnecting_client_frees_its_subscription_and_the_poller_stops(pickup_api):
    school = await pickup_api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    hub = pickup_api.app.state.pickup_stream
    url = f"/api/pickup/schools/{school['id']}/board/events"
    async with serve(pickup_api.app) as base:
        async with httpx.AsyncClient(base_url=base, headers={"X-API-Key": API_KEY}) as http, \
                http.stream("GET", url) as response:
            assert response.status_code == 200
            await _until(lambda: hub.subscribers == 1 and hub.polling, "the subscription")
        await _until(lambda: hub.subscribers == 0 and not hub.polling,
                     "the subscription to be freed")
