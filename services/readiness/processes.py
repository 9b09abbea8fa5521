"""Readiness lines for the processes a deployment needs beside the API and its workers."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.db.models import Instance, as_utc, utcnow
from shared.readiness import Probe
from shared.settings import Settings

# Which process serves which domain: the watcher feeds the signer its folders, the webhook
# gateway feeds SISBAJUD its notices, the gRPC server is a door to every domain.
PROCESS_DOMAINS = {"watcher": {"signer"}, "webhook": {"sisbajud"},
                   "grpc": {"signer", "pickup", "sisbajud"}}


def needed_processes(settings: Settings) -> list[str]:
    """`Readiness:Processes`, else those serving a domain in `Readiness:WorkerDomains`."""
    configured = settings.readiness.processes
    if configured is not None:
        return list(configured)
    domains = set(settings.readiness.worker_domains)
    return [role for role, serves in PROCESS_DOMAINS.items() if serves & domains]


def process_probes(settings: Settings, sessions: async_sessionmaker[AsyncSession]
                   ) -> list[Probe]:
    """`process:<role>`: some process of that role is running and sent a heartbeat lately."""
    stale = timedelta(seconds=settings.readiness.poller_stale_seconds)
    return [_probe(role, sessions, stale) for role in needed_processes(settings)]


def _probe(role: str, sessions: async_sessionmaker[AsyncSession], stale: timedelta) -> Probe:
    async def run() -> tuple[bool, str]:
        async with sessions() as session:
            rows = (await session.exec(select(Instance).where(
                Instance.role == role, Instance.state == "running"))).all()
        now = utcnow()
        live = sorted(row.instance_id for row in rows
                      if now - as_utc(row.last_seen_at) <= stale)
        if live:
            return True, f"{len(live)} live: {', '.join(live)}"
        if rows:
            last = max(as_utc(row.last_seen_at) for row in rows)
            return False, (f"no {role} process has sent a heartbeat for "
                           f"{(now - last).total_seconds():.0f}s")
        return False, f"no {role} process is running"

    return Probe(f"process:{role}", run)
