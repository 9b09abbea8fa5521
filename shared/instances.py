"""This process's row in `instances`: registered at start, refreshed, closed at stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.db.models import Instance, InstanceControl, as_utc, utcnow
from shared.settings import ClusterSettings
from shared.version import full_version

# Short, because readiness takes a worker silent for Readiness:PollerStaleSeconds (15 s)
# for dead although Temporal keeps listing its pollers for about a minute.
HEARTBEAT_SECONDS = 5.0
log = logging.getLogger("esteira.instances")


def instance_id(role: str) -> str:
    """`<host>:<role>:<pid>`: unique per live process on a host."""
    return f"{socket.gethostname()}:{role}:{os.getpid()}"


def cluster_instance_name(cluster: ClusterSettings) -> str:
    """The cluster instance this process belongs to: `Cluster:InstanceName`, else the host."""
    return cluster.instance_name or socket.gethostname()


async def read_stood_down(session: AsyncSession, name: str) -> bool:
    """Whether an operator stood the cluster instance `name` down (and didn't resume it)."""
    row = await session.get(InstanceControl, name)
    return row is not None and row.stood_down


@contextlib.asynccontextmanager
async def registered_instance(sessions: async_sessionmaker[AsyncSession], role: str,
                              cluster: ClusterSettings | None = None) -> AsyncIterator[str]:
    """Keep this process's row alive while the block runs; mark it stopped after."""
    ident = instance_id(role)
    name = cluster_instance_name(cluster or ClusterSettings())
    await _write(sessions, ident, role, name, state="running")
    if cluster is not None and cluster.enabled:
        with contextlib.suppress(Exception):  # a warning only: never stops a boot
            await _warn_versions_mixed(sessions, cluster)
    task = asyncio.create_task(_beat(sessions, ident, role, name))
    try:
        yield ident
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        with contextlib.suppress(Exception):
            await _write(sessions, ident, role, name, state="stopped")


async def live_versions(session: AsyncSession, stale_after_seconds: int) -> set[str]:
    """The builds of every process whose heartbeat is within the stale limit."""
    rows = (await session.exec(select(Instance).where(Instance.state == "running"))).all()
    now = utcnow()
    return {row.version for row in rows
            if (now - as_utc(row.last_seen_at)).total_seconds() <= stale_after_seconds}


async def _warn_versions_mixed(sessions: async_sessionmaker[AsyncSession],
                               cluster: ClusterSettings) -> None:
    async with sessions() as session:
        versions = await live_versions(session, cluster.stale_after_seconds)
    if len(versions) > 1:
        # The seed's "mixed versions": a Critical at the boot of the newer instance.
        log.critical("Mixed versions across live instances: %s (this one runs %s)",
                     ", ".join(sorted(versions)), full_version())


async def _beat(sessions: async_sessionmaker[AsyncSession], ident: str, role: str,
                name: str) -> None:
    while True:
        await asyncio.sleep(HEARTBEAT_SECONDS)
        try:
            await _write(sessions, ident, role, name, state="running")
        except Exception as exc:  # a store hiccup must not kill the process it describes
            log.warning("Could not refresh instance row %s: %s", ident, exc)


async def _write(sessions: async_sessionmaker[AsyncSession], ident: str, role: str,
                 name: str, *, state: str) -> None:
    async with sessions() as session:
        row = await session.get(Instance, ident)
        now = utcnow()
        if row is None:
            row = Instance(instance_id=ident, role=role, host=socket.gethostname(),
                           pid=os.getpid(), version=full_version(), state=state,
                           started_at=now, last_seen_at=now)
        row.state, row.last_seen_at, row.instance_name = state, now, name
        row.stopped_at = now if state == "stopped" else None
        session.add(row)
        await session.commit()
