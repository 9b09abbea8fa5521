"""The guardian page's sign-in: one-time links asked for by identity, counted per key, and
exchanged once for a page session (an access token of kind `web`).

Only SHA-256 hashes of links and sessions are stored. Asking for a link answers the same
whether or not a guardian matched: the request is counted under the identity's hash and the
client's address either way, so neither the answer nor the limit tells who exists.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func
from sqlmodel import delete, select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.access import Deleted, hash_token, issue_token
from activities.pickup.contracts.board import PickupErrorCode, TokenKind
from activities.pickup.errors import pickup_error
from activities.pickup.models import AccessToken, Guardian, SignInLink, SignInRequest
from activities.pickup.records import audit
from activities.pickup.roster_csv import CpfError, normalize_cpf
from shared.db.models import as_utc

# Longer identities are no CPF, e-mail or phone (and are not looked up).
MAX_IDENTITY = 200
INVALID_LINK = "This sign-in link is unknown, used already or expired."


@dataclass(frozen=True)
class Identity:
    """What a guardian typed: a CPF (11 digits) or a contact as the school holds it."""

    cpf: str | None
    contact: str | None

    @property
    def key(self) -> str:
        """The request counter's key: a hash, so the table holds no CPF or e-mail."""
        value = f"cpf:{self.cpf}" if self.cpf else f"contact:{self.contact}"
        return "id:" + hashlib.sha256(value.encode()).hexdigest()


def read_identity(raw: str) -> Identity | None:
    """A CPF (dots, dash and spaces allowed; check digits verified), else the contact
    lowercased and trimmed; None for nothing usable."""
    text = raw.strip()
    if not text or len(text) > MAX_IDENTITY:
        return None
    try:
        return Identity(cpf=normalize_cpf(text), contact=None)
    except CpfError:
        return Identity(cpf=None, contact=text.lower())


async def guardians_named(session: AsyncSession, identity: Identity) -> list[Guardian]:
    """The guardians the identity names (a contact may be shared, a CPF is unique)."""
    if identity.cpf:
        query = select(Guardian).where(Guardian.cpf == identity.cpf)
    else:
        query = select(Guardian).where(func.lower(func.trim(Guardian.contact))
                                       == identity.contact)
    return list((await session.exec(query.order_by(Guardian.id))).all())


async def over_limit(session: AsyncSession, limits: dict[str, int], *, now: datetime,
                     window: timedelta) -> float | None:
    """Seconds until one more request fits, if a key is at its limit; else the request is
    counted under every key (and their rows older than the window go)."""
    since = now - window
    for key, limit in limits.items():
        count, oldest = (await session.exec(select(func.count(), func.min(SignInRequest.at))
                                            .where(SignInRequest.key == key,
                                                   SignInRequest.at > since))).one()
        if count >= limit:
            return max(1.0, (as_utc(oldest) + window - now).total_seconds())
    await session.exec(delete(SignInRequest).where(SignInRequest.key.in_(list(limits)),
                                                   SignInRequest.at <= since))
    session.add_all([SignInRequest(key=key, at=now) for key in limits])
    return None


async def issue_link(session: AsyncSession, guardian: Guardian, *, now: datetime,
                     ttl: timedelta) -> tuple[str, SignInLink]:
    """A new one-time link; the raw token is returned once and never stored."""
    raw = secrets.token_urlsafe(32)
    link = SignInLink(guardian_id=guardian.id, token_hash=hash_token(raw), created_at=now,
                      expires_at=now + ttl)
    session.add(link)
    await session.flush()
    audit(session, entity="guardian", entity_id=guardian.id, action="sign-in-link-issued",
          actor="guardian-page", at=now, school_id=guardian.school_id, link_id=link.id)
    return raw, link


def _usable(raw: str, now: datetime):
    return (SignInLink.token_hash == hash_token(raw), SignInLink.used_at.is_(None),
            SignInLink.expires_at > now)


async def link_usable(session: AsyncSession, raw: str, now: datetime) -> bool:
    """Whether the link would sign in now (read only: a link preview does not spend it)."""
    return (await session.exec(select(SignInLink.id).where(*_usable(raw, now)))).first() \
        is not None


async def use_link(session: AsyncSession, raw: str, *, now: datetime,
                   session_ttl: timedelta) -> tuple[str, AccessToken]:
    """Spend the link (a conditional update: of two uses only one wins) for a new page
    session; unknown, used and expired links are refused alike."""
    spent = (await session.exec(update(SignInLink).where(*_usable(raw, now))
                                .values(used_at=now).returning(SignInLink.id,
                                                               SignInLink.guardian_id))).first()
    if spent is None:
        raise pickup_error(PickupErrorCode.SIGN_IN_LINK_INVALID, INVALID_LINK)
    link_id, guardian_id = spent
    cookie, token = await issue_token(session, guardian_id=guardian_id, ttl=session_ttl,
                                      at=now, kind=TokenKind.WEB)
    await session.flush()
    guardian = await session.get(Guardian, guardian_id)
    audit(session, entity="guardian", entity_id=guardian_id, action="signed-in",
          actor=f"guardian:{guardian_id}", at=now, school_id=guardian.school_id,
          link_id=link_id, token_id=token.id)
    return cookie, token


async def end_session(session: AsyncSession, raw: str, *, now: datetime) -> int | None:
    """Sign a page session out: its row goes, so the cookie no longer signs anyone in."""
    gone = (await session.exec(delete(AccessToken).where(
        AccessToken.token_hash == hash_token(raw), AccessToken.kind == TokenKind.WEB)
        .returning(AccessToken.id, AccessToken.guardian_id))).first()
    if gone is None:
        return None
    token_id, guardian_id = gone
    audit(session, entity="access_token", entity_id=token_id, action="signed-out",
          actor=f"guardian:{guardian_id}", at=now, guardian_id=guardian_id)
    return guardian_id


async def prune_sign_in(session: AsyncSession, *, cutoff: datetime, limit: int) -> Deleted:
    """Links expired before `cutoff` and request counts older than it: hygiene only."""
    links = (await session.exec(select(SignInLink.id).where(SignInLink.expires_at <= cutoff)
                                .limit(limit))).all()
    requests = (await session.exec(select(SignInRequest.id).where(
        SignInRequest.at <= cutoff).limit(limit))).all()
    if links:
        await session.exec(delete(SignInLink).where(SignInLink.id.in_(list(links))))
    if requests:
        await session.exec(delete(SignInRequest).where(SignInRequest.id.in_(list(requests))))
    return Deleted(examined=max(len(links), len(requests)), changed=len(links) + len(requests))


async def forget_links(session: AsyncSession, guardian_id: int) -> None:
    """A deleted guardian's sign-in links go with it (its tokens, sessions included, too)."""
    await session.exec(delete(SignInLink).where(SignInLink.guardian_id == guardian_id))
