"""What the pickup routes share: store sessions, settings, the kicker, guardian auth."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.operator.access import guardian_for_header
from activities.pickup.operator.kicker import Kicker
from activities.pickup.operator.scope import check_path
from services.app_context import ContextDep
from shared.settings import PickupSettings


def _sessions(ctx: ContextDep) -> async_sessionmaker[AsyncSession]:
    return ctx.sessions


def _settings(ctx: ContextDep) -> PickupSettings:
    return ctx.settings.pickup


def _kicker(ctx: ContextDep) -> Kicker:
    # Stateless: the Temporal client it asks for is the context's, connected on first use.
    return Kicker(ctx.settings.pickup, ctx.temporal)


def _actor(request: Request) -> str:
    return getattr(request.state, "actor", "api-key")


Sessions = Annotated[async_sessionmaker[AsyncSession], Depends(_sessions)]
Pickup = Annotated[PickupSettings, Depends(_settings)]
Kick = Annotated[Kicker, Depends(_kicker)]
Actor = Annotated[str, Depends(_actor)]


async def _guardian(sessions: Sessions,
                    authorization: Annotated[str | None, Header()] = None) -> int:
    return await guardian_for_header(sessions, authorization)


GuardianId = Annotated[int, Depends(_guardian)]


def _scope(request: Request) -> int | None:
    # Set by the API key middleware for a school-scoped key; None for the global key.
    return getattr(request.state, "school_id", None)


SchoolScope = Annotated[int | None, Depends(_scope)]


async def school_guard(request: Request, sessions: Sessions, scope: SchoolScope) -> None:
    """404 for a record of another school named in the path (school-scoped keys only)."""
    await check_path(sessions, scope, request.path_params)
