"""What workers found and recorded for readers that must not look themselves (the API)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, DateTime
from sqlmodel import Field, SQLModel

from shared.db.models import utcnow


class WorkerFinding(SQLModel, table=True):
    """The latest verdict on one subject (`signing-profile:<name>`, `domain:<name>`)."""

    __tablename__ = "worker_findings"

    key: str = Field(primary_key=True, max_length=200)
    ok: bool = False
    detail: str = ""
    # What was checked (a profile's cache key): a finding on an older version says nothing.
    subject: str = Field(default="", max_length=300)
    reporter: str = Field(default="", max_length=200)
    checked_at: datetime = Field(default_factory=utcnow, sa_column=Column(
        DateTime(timezone=True), nullable=False))
