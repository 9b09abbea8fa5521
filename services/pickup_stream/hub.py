"""One poller per API process fanning the pickup broadcast table out to every open stream."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field

from activities.pickup.models import BoardEvent
from activities.pickup.operator import Feed, FeedKey, PickupOperations

log = logging.getLogger("esteira.api.pickup_stream")
# Rows read per query, by the poller and by a stream catching up.
BATCH = 500
# Events held for one stream; a stream that falls this far behind drops them and re-reads
# from the table, so a slow client costs memory up to this bound, never more.
BUFFER = 1000


def _seq(event: BoardEvent) -> int:
    """The event's commit-order position (a committed event always has one)."""
    return event.seq or 0


@dataclass(eq=False)
class Subscription:
    """One open stream: its feed, how far it has been served, and what waits for it."""

    feed: Feed
    cursor: int
    buffer: deque[BoardEvent] = field(default_factory=deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    # Not fed live (just joined, or its buffer overflowed): it catches up from the table.
    lagging: bool = True
    closed: bool = False


class StreamHub:
    """Reads new broadcasts once per poll and hands each to the streams whose feed shows it."""

    def __init__(self, pickup: PickupOperations, *, poll_seconds: float,
                 keepalive: float | None = None, buffer: int = BUFFER, batch: int = BATCH,
                 run_poller: bool = True) -> None:
        self._feeds = pickup.feeds
        self._settings = pickup.settings.pickup
        self._keepalive = keepalive
        self._poll_seconds = poll_seconds
        self._buffer = buffer
        self._batch = batch
        self._run_poller = run_poller
        self._by_key: dict[FeedKey, set[Subscription]] = {}
        self._cursor: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._start = asyncio.Lock()
        self._poll = asyncio.Lock()
        self._idle = asyncio.Event()

    @property
    def keepalive(self) -> float:
        """How long a stream idles before it yields None (the SSE door sends a comment line):
        the hub's own, else `…__SSE_KEEPALIVE_SECONDS` as it reads when a stream opens."""
        if self._keepalive is not None:
            return self._keepalive
        return self._settings.sse_keepalive_seconds

    @property
    def subscribers(self) -> int:
        """How many streams are open."""
        return sum(len(subs) for subs in self._by_key.values())

    @property
    def polling(self) -> bool:
        """Whether the poller task is running (it runs while a stream is open)."""
        return self._task is not None

    async def stream(self, feed: Feed, last_id: int | None,
                     keepalive: float | None = None) -> AsyncGenerator[BoardEvent | None, None]:
        """The feed's events after `last_id` (from now if None); None after `keepalive` idle
        (the hub's own by default)."""
        keepalive = self.keepalive if keepalive is None else keepalive
        sub = await self._join(feed, last_id)
        try:
            while not sub.closed:
                async for row in self._catch_up(sub):
                    yield row
                while not (sub.lagging or sub.closed):
                    if sub.buffer:
                        row = sub.buffer.popleft()
                        # A client ahead of this process (Last-Event-ID from another replica).
                        if _seq(row) > sub.cursor:
                            sub.cursor = _seq(row)
                            yield row
                        continue
                    sub.wake.clear()
                    try:
                        async with asyncio.timeout(keepalive):
                            await sub.wake.wait()
                    except TimeoutError:
                        yield None
        finally:
            # No await here: a disconnect cancels the stream and this must still run.
            self._leave(sub)

    async def poll_once(self) -> int:
        """Read what committed since the last poll and fan it out; how many events were read."""
        async with self._poll:
            if self._cursor is None:
                self._cursor = await self._feeds.newest_event_id()
            rows = await self._feeds.events_after(self._cursor, None, self._batch)
            guardians: dict[int, set[int]] = {}
            if any(kind == "guardian" for kind, _ in self._by_key):
                # One query for every guardian stream: their links, as valid now.
                guardians = await self._feeds.guardians_of(
                    r.student_id for r in rows if r.guardian_id is None)
            for row in rows:
                for key in self._feeds.audience(row, guardians):
                    for sub in self._by_key.get(key, ()):
                        self._deliver(sub, row)
                self._cursor = row.seq
            return len(rows)

    async def close(self) -> None:
        """End every stream and stop polling (the app is shutting down)."""
        for subs in self._by_key.values():
            for sub in subs:
                sub.closed = True
                sub.wake.set()
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _join(self, feed: Feed, last_id: int | None) -> Subscription:
        async with self._start:
            if self._cursor is None or not (self._by_key or self._task):
                # Nobody listens: polling resumes from now. What came meanwhile is replayed
                # per stream from its Last-Event-ID, not by the poller.
                async with self._poll:
                    self._cursor = await self._feeds.newest_event_id()
            if self._run_poller and self._task is None:
                self._task = asyncio.get_running_loop().create_task(self._run())
            sub = Subscription(feed, self._cursor if last_id is None else last_id)
            self._by_key.setdefault(feed.key, set()).add(sub)
            self._idle.clear()
            return sub

    async def _catch_up(self, sub: Subscription) -> AsyncGenerator[BoardEvent, None]:
        """Serve from the table up to where the poller is; later events arrive live."""
        sub.lagging = False
        sub.buffer.clear()
        target = self._cursor or 0
        while sub.cursor < target:
            rows = await self._feeds.events_after(sub.cursor, sub.feed.where, self._batch,
                                                  upto=target)
            for row in rows:
                sub.cursor = _seq(row)
                yield row
            if len(rows) < self._batch:
                break
        sub.cursor = max(sub.cursor, target)

    def _deliver(self, sub: Subscription, row: BoardEvent) -> None:
        if sub.lagging or sub.closed:
            return
        if len(sub.buffer) >= self._buffer:
            sub.lagging = True
            sub.buffer.clear()
        else:
            sub.buffer.append(row)
        sub.wake.set()

    def _leave(self, sub: Subscription) -> None:
        subs = self._by_key.get(sub.feed.key)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._by_key[sub.feed.key]
        if not self._by_key:
            self._idle.set()

    async def _run(self) -> None:
        while self._by_key:
            try:
                read = await self.poll_once()
            except Exception:
                # The store is down or restarting: streams stay open and catch up after.
                log.warning("The pickup stream poll failed; retrying", exc_info=True)
                read = 0
            if read < self._batch and self._by_key:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._poll_seconds):
                        await self._idle.wait()
        # Synchronous with the check above: a stream joining now starts a new poller.
        self._task = None
