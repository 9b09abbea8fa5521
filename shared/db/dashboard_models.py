"""The dashboard's server-side memory: sessions ended before they expire, failed sign-ins."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, DateTime
from sqlmodel import Field, SQLModel


class RevokedSession(SQLModel, table=True):
    """A signed session cookie that no longer counts (its operator signed out)."""

    __tablename__ = "dashboard_revoked_sessions"

    # SHA-256 of the session's own random token, never the token itself.
    session_id: str = Field(primary_key=True, max_length=64)
    # The cookie's own expiry: past it the row is no longer needed.
    expires_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))


class SignInFailures(SQLModel, table=True):
    """Consecutive wrong passwords for one operator name, and the lockout they earned."""

    __tablename__ = "dashboard_sign_in_failures"

    operator: str = Field(primary_key=True, max_length=100)
    failures: int = 0
    last_failure_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    locked_until: datetime | None = Field(default=None, sa_column=Column(
        DateTime(timezone=True), nullable=True))
