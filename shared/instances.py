"""This process's row in `instances`: registered at start, refreshed, closed at stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.db.models import Instance, utcnow
from shared.version import full_version

# Short, because readiness takes a worker silent for Readiness:PollerStaleSeconds (15 s)
# for dead although Temporal keeps listing its pollers for about a minute.
HEARTBEAT_SECONDS = 5.0
log = logging.getLogger("esteira.instances")


def instance_id(role: str) -> str:
    """`<host>:<role>:<pid>`: unique per live process on a host."""
    return f"{socket.gethostname()}:{role}:{os.getpid()}"


@contextlib.asynccontextmanager
async def registered_instance(sessions: async_sessionmaker[AsyncSession], role: str
                              ) -> AsyncIterator[str]:
    """Keep this process's row alive while the block runs; mark it stopped after."""
    ident = instance_id(role)
    await _write(sessions, ident, role, state="running")
    task = asyncio.create_task(_beat(sessions, ident, role))
    try:
        yield ident
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        with contextlib.suppress(Exception):
            await _write(sessions, ident, role, state="stopped")


async def _beat(sessions: async_sessionmaker[AsyncSession], ident: str, role: str) -> None:
    while True:
        await asyncio.sleep(HEARTBEAT_SECONDS)
        try:
            await _write(sessions, ident, role, state="running")
        except Exception as exc:  # a store hiccup must not kill the process it describes
            log.warning("Could not refresh instance row %s: %s", ident, exc)


async def _write(sessions: async_sessionmaker[AsyncSession], ident: str, role: str, *,
                 state: str) -> None:
    async with sessions() as session:
        row = await session.get(Instance, ident)
        now = utcnow()
        if row is None:
            row = Instance(instance_id=ident, role=role, host=socket.gethostname(),
                           pid=os.getpid(), version=full_version(), state=state,
                           started_at=now, last_seen_at=now)
        row.state, row.last_seen_at = state, now
        row.stopped_at = now if state == "stopped" else None
        session.add(row)
        await session.commit()
