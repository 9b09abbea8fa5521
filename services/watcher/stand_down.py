"""This instance's stand-down flag as the watcher follows it: re-read every poll interval."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.instances import read_stood_down

log = logging.getLogger("esteira.watcher")


class StandDownFollower:
    """Whether an operator stood this instance down; `name` None (cluster mode off): never."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], name: str | None,
                 poll_seconds: float) -> None:
        self._sessions = sessions
        self._name = name
        self._poll_seconds = poll_seconds
        self.stood_down = False

    def held(self) -> bool:
        """True while stood down: the watchers enqueue nothing new."""
        return self.stood_down

    async def read(self) -> None:
        """Read the flag once; a store hiccup keeps the last answer."""
        if self._name is None:
            return
        try:
            async with self._sessions() as session:
                stood_down = await read_stood_down(session, self._name)
        except Exception as exc:
            log.warning("Could not read the stand-down flag of %s: %s", self._name, exc)
            return
        if stood_down != self.stood_down:
            log.warning("Instance %s %s", self._name,
                        "stood down: no new files are enqueued" if stood_down
                        else "resumed: enqueueing files again")
        self.stood_down = stood_down

    async def run(self, stop: asyncio.Event) -> None:
        """Follow the flag until `stop`."""
        while not stop.is_set():
            await self.read()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self._poll_seconds)
