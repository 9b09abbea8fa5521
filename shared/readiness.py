"""Readiness probes: each names a check, says ok or not, and whether it fails readiness."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from temporalio.client import Client

PROBE_TIMEOUT_SECONDS = 3.0


@dataclass(frozen=True)
class Check:
    """One probe's verdict; `gating` checks turn /api/ready into a 503 when they fail."""

    name: str
    ok: bool
    detail: str = ""
    gating: bool = True


@dataclass(frozen=True)
class Probe:
    """A named async check; a raised exception or a timeout counts as a failed check."""

    name: str
    run: Callable[[], Awaitable[tuple[bool, str]]]
    gating: bool = True


@dataclass
class Readiness:
    """The verdict over all probes."""

    checks: list[Check] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        """False when any gating check failed."""
        return all(c.ok for c in self.checks if c.gating)


async def evaluate(probes: Sequence[Probe]) -> Readiness:
    """Run every probe concurrently, each bounded by a timeout."""
    return Readiness(list(await asyncio.gather(*(_run_one(p) for p in probes))))


async def _run_one(probe: Probe) -> Check:
    try:
        ok, detail = await asyncio.wait_for(probe.run(), PROBE_TIMEOUT_SECONDS)
    except TimeoutError:
        ok, detail = False, f"no answer within {PROBE_TIMEOUT_SECONDS:g}s"
    except Exception as exc:
        ok, detail = False, f"{type(exc).__name__}: {exc}"
    return Check(probe.name, ok, detail, probe.gating)


def store_probe(engine: AsyncEngine) -> Probe:
    """The operational store answers a query."""

    async def run() -> tuple[bool, str]:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT 1"))
        return True, f"{engine.url.get_backend_name()} answered"

    return Probe("operational-store", run)


def temporal_probe(client_provider: Callable[[], Awaitable[Client]]) -> Probe:
    """The Temporal frontend answers a health check."""

    async def run() -> tuple[bool, str]:
        client = await client_provider()
        healthy = await client.service_client.check_health(timeout=timedelta(seconds=2))
        return healthy, f"{client.service_client.config.target_host} namespace={client.namespace}"

    return Probe("temporal", run)
