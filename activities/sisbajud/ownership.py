"""Who owns an institution: the owner recorded when it was created, against
`EXECUTOR_M2M_SUBJECT` (the seed: on creating an institution the executor records its own
subject as owner)."""

from __future__ import annotations

import logging

import httpx
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.contracts.orders import Ownership, OwnershipResult
from activities.sisbajud.models import SisbajudInstitution
from activities.sisbajud.store import insert_ignore
from shared.db.models import utcnow
from shared.settings import Settings

log = logging.getLogger("esteira.sisbajud")


async def check_ownership(settings: Settings, sessions: async_sessionmaker[AsyncSession],
                          http: httpx.AsyncClient | None, institution_id: str
                          ) -> OwnershipResult:
    """OWNED when the institution's recorded owner is our `EXECUTOR_M2M_SUBJECT`.

    An institution configured here but not yet recorded is created now, owned by us; Midaz is
    not asked (no ledger read the seed does not grant, no metadata key of our own there). That
    our token speaks for that subject is checked at boot (`sisbajud:connections`)."""
    if not any(i.id == institution_id for i in settings.sisbajud.institutions):
        return OwnershipResult(ownership=Ownership.UNCONFIGURED)
    subject = settings.sisbajud.m2m_subject
    async with sessions() as session:
        # Read first: once the record exists, an order's check writes nothing (a write per
        # order queued behind every other SQLite writer).
        row = await session.get(SisbajudInstitution, institution_id)
        owner = row.owner_subject if row is not None else None
        if owner is None:
            owner = await record_owner(session, institution_id, subject)
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
