"""What the API's routes share: settings, the store, Temporal, probes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from services.api.process_probes import process_probes
from services.api.signer_probes import SignerProbes
from services.worker.readiness import worker_probes
from shared.readiness import Probe, store_probe, temporal_probe
from shared.settings import Settings


@dataclass
class ApiContext:
    """Dependencies of the API process, built once in its `main()`."""

    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    api_key: str
    connect_temporal: Callable[[], Awaitable[Client]]
    extra_probes: list[Probe] = field(default_factory=list)
    _client: Client | None = None
    _client_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _signer_probes: SignerProbes | None = None

    async def temporal(self) -> Client:
        """The Temporal client, connected on first use (the API starts even if Temporal is
        down; readiness says so)."""
        async with self._client_lock:
            if self._client is None:
                self._client = await self.connect_temporal()
            return self._client

    async def probes(self) -> list[Probe]:
        """Every readiness probe: store, Temporal, then the domains' (folders, profiles, …)."""
        domain: list[Probe] = []
        try:
            if self._signer_probes is None:
                self._signer_probes = SignerProbes(self.settings, self.sessions)
            domain = await self._signer_probes.probes()
        except Exception:
            # The store is down: its own probe says so; domain probes can't be listed.
            domain = []
        return [store_probe(self.engine), temporal_probe(self.temporal),
                *worker_probes(self.settings, self.sessions, self.temporal),
                *process_probes(self.settings, self.sessions), *domain,
                *self.extra_probes]


def get_context(request: Request) -> ApiContext:
    """The app's `ApiContext` (set by `create_app`)."""
    return request.app.state.context


# The one way a route reaches the API's dependencies: `ctx: ContextDep`.
ContextDep = Annotated[ApiContext, Depends(get_context)]
