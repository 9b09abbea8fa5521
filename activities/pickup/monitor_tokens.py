"""Per-school Monitor tokens: each school's controller pushes to a path only it knows."""

from __future__ import annotations

import secrets

from sqlmodel import select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.access import hash_token
from activities.pickup.contracts.board import PickupErrorCode
from activities.pickup.errors import pickup_error
from activities.pickup.models import School
from shared.auth import keys_match


def new_token() -> tuple[str, str]:
    """(raw token for the controller's path, its SHA-256 for the school row)."""
    raw = secrets.token_urlsafe(32)
    return raw, hash_token(raw)


async def store_token(session: AsyncSession, *, school_id: int, digest: str) -> None:
    """Make `digest` the school's token (the previous one stops working)."""
    await session.exec(update(School).where(School.id == school_id)
                       .values(monitor_token_hash=digest))


async def check_token(session: AsyncSession, *, school_id: int, token: str,
                      fallback: str | None) -> None:
    """Accept the school's own token (constant-time on the digests); a school without one
    accepts the deployment-wide `fallback`. Another school's token is 403, anything else 401.
    """
    digest = hash_token(token)
    school = await session.get(School, school_id)
    own = school.monitor_token_hash if school is not None else None
    if own is not None and keys_match(digest, own):
        return
    if own is None and fallback is not None and keys_match(token, fallback):
        return
    elsewhere = (await session.exec(select(School.id).where(
        School.monitor_token_hash == digest, School.id != school_id))).first()
    if elsewhere is not None:
        raise pickup_error(PickupErrorCode.MONITOR_WRONG_SCHOOL,
                           f"That monitor token is not school {school_id}'s.")
    raise pickup_error(PickupErrorCode.MONITOR_UNAUTHORIZED, "Unknown monitor token.")
