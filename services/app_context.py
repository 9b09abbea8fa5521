"""What the API process's doors (REST, dashboard) share: settings, the store, one Temporal
handle, the domains' faces, readiness probes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.operator import PickupOperations
from activities.signer.operator import SignerOperations
from activities.sisbajud.operator import SisbajudOperations
from services.composition import Faces, compose
from services.readiness.processes import process_probes
from services.readiness.signer import SignerProbes
from services.readiness.workers import worker_probes
from shared.db.engine import session_factory
from shared.readiness import Probe, store_probe, temporal_probe
from shared.settings import Settings
from shared.temporal import TemporalHandle


@dataclass
class ApiContext:
    """Dependencies of the API process, built once in its `main()` (`ApiContext.build`)."""

    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    api_key: str
    # The process's one Temporal client, connected on first use (the API starts even if
    # Temporal is down; readiness says so).
    temporal: TemporalHandle
    faces: Faces
    extra_probes: list[Probe] = field(default_factory=list)
    _signer_probes: SignerProbes | None = None

    @classmethod
    def build(cls, settings: Settings, engine: AsyncEngine, *, api_key: str,
              temporal: TemporalHandle) -> ApiContext:
        """The context and the domains' faces around one engine and one Temporal handle."""
        sessions = session_factory(engine)
        return cls(settings=settings, engine=engine, sessions=sessions, api_key=api_key,
                   temporal=temporal, faces=compose(settings, sessions, temporal))

    async def probes(self) -> list[Probe]:
        """Every readiness probe: store, Temporal, then the domains' (folders, profiles, …)."""
        domain: list[Probe] = []
        try:
            if self._signer_probes is None:
                self._signer_probes = SignerProbes(self.faces.signer)
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


def _signer(request: Request) -> SignerOperations:
    return get_context(request).faces.signer


def _pickup(request: Request) -> PickupOperations:
    return get_context(request).faces.pickup


def _sisbajud(request: Request) -> SisbajudOperations:
    return get_context(request).faces.sisbajud


# How a route of either door (REST, dashboard) names the face it calls.
SignerFace = Annotated[SignerOperations, Depends(_signer)]
PickupFace = Annotated[PickupOperations, Depends(_pickup)]
SisbajudFace = Annotated[SisbajudOperations, Depends(_sisbajud)]
