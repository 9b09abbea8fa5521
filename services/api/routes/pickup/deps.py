"""What the pickup routes share: store sessions, settings, the kicker, guardian auth."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.access import guardian_for_token
from activities.pickup.errors import pickup_error
from activities.pickup.kick import Kicker
from services.api.context import ApiContext
from shared.contracts.pickup import PickupErrorCode
from shared.db.models import utcnow
from shared.settings import PickupSettings


def _context(request: Request) -> ApiContext:
    return request.app.state.context


def _sessions(request: Request) -> async_sessionmaker[AsyncSession]:
    return _context(request).sessions


def _settings(request: Request) -> PickupSettings:
    return _context(request).settings.pickup


def _kicker(request: Request) -> Kicker:
    state = request.app.state
    if getattr(state, "pickup_kicker", None) is None:
        context = _context(request)
        state.pickup_kicker = Kicker(context.settings.pickup, context.temporal)
    return state.pickup_kicker


def _actor(request: Request) -> str:
    return getattr(request.state, "actor", "api-key")


Sessions = Annotated[async_sessionmaker[AsyncSession], Depends(_sessions)]
Pickup = Annotated[PickupSettings, Depends(_settings)]
Kick = Annotated[Kicker, Depends(_kicker)]
Actor = Annotated[str, Depends(_actor)]


async def _guardian(sessions: Sessions,
                    authorization: Annotated[str | None, Header()] = None) -> int:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise pickup_error(PickupErrorCode.TOKEN_MISSING,
                           "An `Authorization: Bearer <access token>` header is required.")
    async with sessions() as session:
        return await guardian_for_token(session, token.strip(), utcnow())


GuardianId = Annotated[int, Depends(_guardian)]
