"""Workflow-start marks of parallel enqueues share one commit, and none is lost on a failure."""

from __future__ import annotations

import asyncio

import pytest

from activities.signer.enqueue import _StartMarks


class _Store:
    """Records each write; the first one waits until released, the ones in `failing` raise."""

    def __init__(self, failing: int = 0) -> None:
        self.writes: list[set[str]] = []
        self.failing = failing
        self.release = asyncio.Event()

    async def mark_workflow_started(self, *job_ids: str) -> None:
        if not self.writes and not self.release.is_set():
            self.writes.append(set())  # the first write is in flight
            await self.release.wait()
            self.writes[0] = set(job_ids)
        else:
            self.writes.append(set(job_ids))
        if self.failing:
            self.failing -= 1
            raise ConnectionError("store down")


async def _until(condition) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0)


async def test_marks_arriving_during_a_write_share_the_next_commit():
    store = _Store()
    marks = _StartMarks(store)
    first = asyncio.create_task(marks.mark("a"))
    await _until(lambda: store.writes)
    rest = [asyncio.create_task(marks.mark(job)) for job in "bcdef"]
    await _until(lambda: len(marks._pending) == 5)
    store.release.set()
    await asyncio.gather(first, *rest)
    assert store.writes == [{"a"}, set("bcdef")]


async def test_a_failed_write_leaves_its_marks_to_the_next_caller():
    store = _Store(failing=1)
    marks = _StartMarks(store)
    first = asyncio.create_task(marks.mark("a"))
    await _until(lambda: store.writes)
    second = asyncio.create_task(marks.mark("b"))
    await _until(lambda: "b" in marks._pending)
    store.release.set()
    with pytest.raises(ConnectionError):
        await first
    await second
    assert store.writes == [{"a"}, {"a", "b"}]
