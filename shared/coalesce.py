"""Calls that arrive while an earlier one runs, answered together by one batch."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")
Batch = Callable[[list[Item]], Awaitable[Sequence["Result | Exception"]]]


class Coalescer(Generic[Item, Result]):
    """`await coalescer(item)`; the items queued while a batch runs go together in the next one.

    `batch(items)` returns one outcome per item, in order: a result, or an exception for that
    caller alone. An exception it raises goes to every caller of that batch, and only them.
    """

    def __init__(self, batch: Batch[Item, Result], *, limit: int | None = None) -> None:
        self._batch = batch
        self._limit = limit  # items per batch at most (the rest go in the next one)
        self._pending: list[tuple[Item, asyncio.Future[Result]]] = []
        self._running = asyncio.Lock()

    @property
    def waiting(self) -> int:
        """Items queued for the next batch."""
        return len(self._pending)

    async def __call__(self, item: Item) -> Result:
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._pending.append((item, future))
        try:
            async with self._running:
                # Nothing pending yet not done: its item is in a batch still running for a
                # caller cancelled meanwhile, which answers it.
                while not future.done() and self._pending:
                    batch = self._pending[:self._limit]
                    del self._pending[:len(batch)]
                    # Shielded: a caller cancelled meanwhile leaves no other caller waiting.
                    await asyncio.shield(self._answer(batch))
            return await future
        except asyncio.CancelledError:
            future.cancel()  # its batch (which may still run it) skips a cancelled caller
            raise

    async def _answer(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            outcomes = list(await self._batch([item for item, _ in batch]))
        except Exception as exc:
            outcomes = [exc] * len(batch)
        except BaseException:
            for _, future in batch:
                future.cancel()
            raise
        for (_, future), outcome in zip(batch, outcomes, strict=True):
            if future.done():
                continue
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
