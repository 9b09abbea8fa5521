"""Who owns an institution: Midaz's word (or our record) against the subject of our token."""

from __future__ import annotations

import logging

import httpx
from sqlalchemy import update
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud import owner_cache
from activities.sisbajud.clients import MidazClient, UpstreamError
from activities.sisbajud.errors import SisbajudErrorCode, fail
from activities.sisbajud.store import insert_ignore
from shared.contracts.sisbajud import Ownership, OwnershipResult
from shared.db.models import utcnow
from shared.db.sisbajud_models import SisbajudInstitution
from shared.settings import Settings

log = logging.getLogger("esteira.sisbajud")


async def check_ownership(settings: Settings, sessions: async_sessionmaker[AsyncSession],
                          http: httpx.AsyncClient, institution_id: str) -> OwnershipResult:
    """OWNED when the owner equals the `sub` of the token the institution's Midaz issued us.

    The owner is what Midaz reports in the ledger's metadata; when it reports none, the one
    recorded when this executor created the institution (the token's subject at that time)."""
    institution = next((i for i in settings.sisbajud.institutions if i.id == institution_id),
                       None)
    if institution is None:
        return OwnershipResult(ownership=Ownership.UNCONFIGURED)
    midaz = MidazClient.for_institution(http, settings, institution)
    try:
        subject = await midaz.subject()
        reported = await owner_cache.reported_owner(midaz)
    except UpstreamError as exc:
        raise fail(SisbajudErrorCode.MIDAZ_UNAVAILABLE,
                   f"ownership of {institution_id}: {exc}") from exc
    if not subject:
        # A token without a subject vouches for nobody: never write on it.
        return OwnershipResult(ownership=Ownership.FOREIGN, owner=reported)
    async with sessions() as session:
        # Read first: once the record exists and agrees, an order's check writes nothing
        # (a write per order queued behind every other SQLite writer).
        row = await session.get(SisbajudInstitution, institution_id)
        owner = row.owner_subject if row is not None else None
        wrote = owner is None
        if owner is None:
            owner = await record_owner(session, institution_id, reported or subject)
        if reported is not None and owner != reported:
            # Midaz is the authority on its ledger; our record follows it.
            await session.exec(update(SisbajudInstitution)  # type: ignore[call-overload]
                               .where(SisbajudInstitution.institution_id == institution_id)
                               .values(owner_subject=reported))
            owner, wrote = reported, True
        if wrote:
            await session.commit()
    return OwnershipResult(ownership=Ownership.OWNED if owner == subject else Ownership.FOREIGN,
                           owner=owner)


async def record_owner(session: AsyncSession, institution_id: str, subject: str) -> str:
    """Create the institution owned by `subject` unless it exists; return its owner."""
    await insert_ignore(session, SisbajudInstitution, {
        "institution_id": institution_id, "owner_subject": subject, "created_at": utcnow()},
        ["institution_id"])
    row = await session.get(SisbajudInstitution, institution_id)
    assert row is not None
    return row.owner_subject
