"""The dashboard's server-side state: sessions revoked at logout, sign-in lockouts."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from services.dashboard.session import Session
from shared.db.dashboard_models import RevokedSession, SignInFailures
from shared.db.models import as_utc


def session_id(session: Session) -> str:
    """What identifies a session server-side: a hash of its random token, not the token."""
    return hashlib.sha256(session.csrf.encode()).hexdigest()


class SessionRevocations:
    """Signed cookies stay valid until they expire unless revoked here (logout)."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions

    async def revoke(self, session: Session, now: datetime) -> None:
        """This session no longer signs anyone in, on any API process of the deployment."""
        async with self._sessions() as db:
            # Rows past their cookie's expiry guard nothing: the cookie is refused anyway.
            await db.exec(delete(RevokedSession).where(RevokedSession.expires_at < now))
            await db.merge(RevokedSession(session_id=session_id(session),
                                          expires_at=session.expires))
            await db.commit()

    async def is_revoked(self, session: Session) -> bool:
        """Whether the operator signed this session out."""
        async with self._sessions() as db:
            return await db.get(RevokedSession, session_id(session)) is not None


class SignInThrottle:
    """After `max_failures` wrong passwords in a row, an operator name is locked for a while,
    the right password included: guessing costs `lockout` per `max_failures` tries."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], *, max_failures: int,
                 lockout: timedelta) -> None:
        self._sessions = sessions
        self.max_failures = max_failures
        self.lockout = lockout

    @staticmethod
    def _key(name: str) -> str:
        return name.strip().casefold()[:100]

    async def locked_for(self, name: str, now: datetime) -> float | None:
        """Seconds left on the name's lockout, or None when it may try."""
        async with self._sessions() as db:
            row = await db.get(SignInFailures, self._key(name))
        if row is None or row.locked_until is None or as_utc(row.locked_until) <= now:
            return None
        return (as_utc(row.locked_until) - now).total_seconds()

    async def failed(self, name: str, now: datetime) -> None:
        """Count a wrong password; the `max_failures`-th in a row locks the name."""
        async with self._sessions() as db:
            row = await db.get(SignInFailures, self._key(name))
            if row is None:
                row = SignInFailures(operator=self._key(name), last_failure_at=now)
            elif (row.locked_until is not None and as_utc(row.locked_until) <= now) or \
                    as_utc(row.last_failure_at) + self.lockout <= now:
                # A served lockout, or a quiet spell as long as one, starts a fresh count.
                row.failures, row.locked_until = 0, None
            row.failures += 1
            row.last_failure_at = now
            if row.failures >= self.max_failures:
                row.locked_until = now + self.lockout
            db.add(row)
            await db.commit()

    async def succeeded(self, name: str) -> None:
        """A right password clears the count."""
        async with self._sessions() as db:
            await db.exec(delete(SignInFailures).where(
                SignInFailures.operator == self._key(name)))
            await db.commit()
