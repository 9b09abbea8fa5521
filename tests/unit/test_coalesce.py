"""Calls that arrive while a batch runs share the next one; each caller gets its own outcome."""

from __future__ import annotations

import asyncio
import gc

import pytest

from shared.coalesce import Coalescer


class _Store:
    """Answers each item doubled; the first batch waits until released; odd items can fail."""

    def __init__(self, *, failing: str | None = None) -> None:
        self.batches: list[list[int]] = []
        self.release = asyncio.Event()
        self.failing = failing

    async def double(self, items: list[int]) -> list[int | Exception]:
        self.batches.append(items)
        if len(self.batches) == 1:
            await self.release.wait()
        if self.failing == "batch" and len(self.batches) == 2:
            raise ConnectionError("store down")
        return [ValueError(f"odd {i}") if self.failing == "odd" and i % 2 else 2 * i
                for i in items]


async def _until(condition) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0)


async def _first_in_flight(store: _Store, coalescer: Coalescer, rest: range
                           ) -> tuple[asyncio.Task, list[asyncio.Task]]:
    """Item 0's batch running; `rest` queued behind it."""
    first = asyncio.create_task(coalescer(0))
    await _until(lambda: store.batches)
    tasks = [asyncio.create_task(coalescer(i)) for i in rest]
    await _until(lambda: coalescer.waiting == len(rest))
    return first, tasks


async def test_calls_arriving_during_a_batch_share_the_next_and_get_their_own_results():
    store = _Store()
    coalescer = Coalescer(store.double)
    first, rest = await _first_in_flight(store, coalescer, range(1, 6))
    store.release.set()
    assert await asyncio.gather(first, *rest) == [0, 2, 4, 6, 8, 10]
    assert store.batches == [[0], [1, 2, 3, 4, 5]]


async def test_a_limit_splits_the_waiting_calls_into_batches():
    store = _Store()
    coalescer = Coalescer(store.double, limit=2)
    first, rest = await _first_in_flight(store, coalescer, range(1, 6))
    store.release.set()
    assert await asyncio.gather(first, *rest) == [0, 2, 4, 6, 8, 10]
    assert store.batches == [[0], [1, 2], [3, 4], [5]]


async def test_an_items_own_error_reaches_only_its_caller():
    store = _Store(failing="odd")
    coalescer = Coalescer(store.double)
    first, rest = await _first_in_flight(store, coalescer, range(1, 4))
    store.release.set()
    outcomes = await asyncio.gather(first, *rest, return_exceptions=True)
    assert outcomes[0] == 0 and outcomes[2] == 4
    assert [str(outcomes[i]) for i in (1, 3)] == ["odd 1", "odd 3"]


async def test_a_failed_batch_fails_its_callers_only():
    store = _Store(failing="batch")
    coalescer = Coalescer(store.double)
    first, rest = await _first_in_flight(store, coalescer, range(1, 3))
    store.release.set()
    assert await first == 0
    for task in rest:
        with pytest.raises(ConnectionError):
            await task
    assert await coalescer(7) == 14  # the next batch runs as usual


async def test_a_caller_cancelled_mid_batch_leaves_the_others_answered(caplog):
    store = _Store()
    coalescer = Coalescer(store.double)
    first, rest = await _first_in_flight(store, coalescer, range(1, 4))
    first.cancel()  # the batch it runs goes on for the others' sake
    with pytest.raises(asyncio.CancelledError):
        await first
    rest[0].cancel()  # waiting for its turn: skipped when its batch answers
    store.release.set()
    assert await asyncio.gather(*rest[1:]) == [4, 6]
    assert store.batches == [[0], [1, 2, 3]]
    gc.collect()
    assert "never retrieved" not in caplog.text
