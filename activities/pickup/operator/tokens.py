"""A guardian's app tokens: listed (never their values) and revoked."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import delete, select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.errors import not_found
from activities.pickup.models import AccessToken, Guardian
from activities.pickup.records import audit
from shared.db.models import utcnow

Sessions = async_sessionmaker[AsyncSession]


async def list_tokens(sessions: Sessions, guardian_id: int) -> list[AccessToken]:
    """The guardian's tokens, oldest first (ids and dates; the hash stays in the store)."""
    async with sessions() as session:
        if await session.get(Guardian, guardian_id) is None:
            raise not_found("Guardian", guardian_id)
        return list((await session.exec(select(AccessToken).where(
            AccessToken.guardian_id == guardian_id).order_by(AccessToken.id))).all())


async def revoke_token(sessions: Sessions, *, guardian_id: int, token_id: int,
                       actor: str) -> None:
    """Revoke one token: its row goes, so the app's next call gets 401 token-invalid."""
    async with sessions() as session, session.begin():
        token = await session.get(AccessToken, token_id)
        if token is None or token.guardian_id != guardian_id:
            raise not_found("Token", token_id)
        guardian = await session.get(Guardian, guardian_id)
        await session.exec(delete(AccessToken).where(AccessToken.id == token_id))
        audit(session, entity="access_token", entity_id=token_id, action="revoked",
              actor=actor, at=utcnow(), school_id=guardian.school_id, guardian_id=guardian_id)
