"""Tables shared by every domain: pipeline state, the events trail, instances."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    """Aware UTC now; every timestamp in the store is UTC."""
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """SQLite hands timestamps back naive; they were written as UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _utc_column(**kwargs: Any) -> Any:
    return Field(default_factory=utcnow, sa_column=Column(DateTime(timezone=True), **kwargs))


class PipelineState(SQLModel, table=True):
    """The durable pause flag of the signing pipeline: one row, versioned for races."""

    __tablename__ = "pipeline_state"

    id: int = Field(default=1, primary_key=True)
    paused: bool = False
    reason: str | None = None
    changed_by: str | None = None
    changed_at: datetime = _utc_column(nullable=False)
    version: int = 0


class OperationalEvent(SQLModel, table=True):
    """One line of the operational events trail (pause, profile edits, takeovers, …)."""

    __tablename__ = "operational_events"
    __table_args__ = (Index("ix_operational_events_type_at", "type", "at"),)

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = _utc_column(nullable=False, index=True)
    domain: str = Field(max_length=32)
    type: str = Field(max_length=64)
    message: str
    actor: str | None = Field(default=None, max_length=200)
    properties: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class Instance(SQLModel, table=True):
    """A process of this deployment: identity, build, liveness, how it last stopped."""

    __tablename__ = "instances"

    instance_id: str = Field(primary_key=True, max_length=200)
    role: str = Field(max_length=64)
    host: str = Field(max_length=200)
    pid: int
    version: str = Field(max_length=100)
    state: str = Field(max_length=32)
    started_at: datetime = _utc_column(nullable=False)
    last_seen_at: datetime = _utc_column(nullable=False)
    stopped_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True)))
    # The cluster instance (`Cluster:InstanceName`, else the host) this process belongs to.
    instance_name: str | None = Field(default=None, max_length=200, index=True)


class InstanceControl(SQLModel, table=True):
    """An operator's stand-down of one cluster instance: durable across its restarts."""

    __tablename__ = "instance_controls"

    name: str = Field(primary_key=True, max_length=200)
    stood_down: bool = False
    changed_by: str | None = Field(default=None, max_length=200)
    changed_at: datetime = _utc_column(nullable=False)
