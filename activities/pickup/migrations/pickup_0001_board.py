"""Pickup: schools, students, guardians, links, authorizations, audit, events, ledger, outbox.

Revision ID: pickup_0001
Revises: 0001_foundation
Create Date: 2026-11-29
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "pickup_0001"
down_revision = "0001_foundation"
branch_labels = ("pickup",)
depends_on = None


def _at(name: str, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _id() -> sa.Column[Any]:
    return sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True)


def _tables() -> None:
    op.create_table(
        "pickup_schools", _id(),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("arrival_timeout_minutes", sa.Float(), nullable=False),
        sa.Column("turnstile_url", sa.String(500), nullable=True),
        _at("created_at"),
    )
    op.create_table(
        "pickup_students", _id(),
        sa.Column("school_id", sa.Integer(), sa.ForeignKey("pickup_schools.id"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        _at("state_since"),
        sa.Column("state_reason", sa.String(200), nullable=True),
        sa.Column("arrival_id", sa.Integer(), nullable=True),
    )
    op.create_table(
        "pickup_guardians", _id(),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("contact", sa.String(200), nullable=True),
    )
    op.create_table(
        "pickup_guardian_links", _id(),
        sa.Column("student_id", sa.Integer(), sa.ForeignKey("pickup_students.id"),
                  nullable=False),
        sa.Column("guardian_id", sa.Integer(), sa.ForeignKey("pickup_guardians.id"),
                  nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        _at("valid_from", True), _at("valid_until", True), _at("created_at"),
        sa.UniqueConstraint("student_id", "guardian_id", name="uq_pickup_links_pair"),
    )
    op.create_table(
        "pickup_authorized_persons", _id(),
        sa.Column("student_id", sa.Integer(), sa.ForeignKey("pickup_students.id"),
                  nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("document", sa.String(64), nullable=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("sync_status", sa.String(16), nullable=False),
        _at("valid_from", True), _at("valid_until", True),
        sa.Column("version", sa.Integer(), nullable=False),
        _at("created_at"), _at("updated_at"),
    )
    op.create_table(
        "pickup_early_releases", _id(),
        sa.Column("student_id", sa.Integer(), sa.ForeignKey("pickup_students.id"),
                  nullable=False),
        sa.Column("reason", sa.String(500), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        _at("valid_until"), _at("used_at", True),
        sa.Column("version", sa.Integer(), nullable=False),
        _at("created_at"),
    )
    op.create_table(
        "pickup_access_tokens", _id(),
        sa.Column("guardian_id", sa.Integer(), sa.ForeignKey("pickup_guardians.id"),
                  nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        _at("expires_at"), _at("created_at"),
    )
    op.create_table(
        "pickup_arrivals", _id(),
        sa.Column("school_id", sa.Integer(), sa.ForeignKey("pickup_schools.id"), nullable=False),
        sa.Column("student_id", sa.Integer(), sa.ForeignKey("pickup_students.id"),
                  nullable=False),
        sa.Column("guardian_id", sa.Integer(), sa.ForeignKey("pickup_guardians.id"),
                  nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        _at("created_at"), _at("expires_at"), _at("closed_at", True),
    )


def _records() -> None:
    op.create_table(
        "pickup_audit", _id(), _at("at"),
        sa.Column("school_id", sa.Integer(), nullable=True),
        sa.Column("entity", sa.String(32), nullable=False),
        sa.Column("entity_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("from_state", sa.String(32), nullable=True),
        sa.Column("to_state", sa.String(32), nullable=True),
        sa.Column("reason", sa.String(200), nullable=True),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
    )
    op.create_table(
        "pickup_events", _id(), _at("at"),
        sa.Column("type", sa.String(64), nullable=False),
        sa.Column("school_id", sa.Integer(), nullable=False),
        sa.Column("student_id", sa.Integer(), nullable=False),
        sa.Column("guardian_id", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(200), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
    )
    op.create_table(
        "pickup_ledger", _id(),
        sa.Column("controller", sa.Integer(), nullable=False),
        sa.Column("command", sa.String(16), nullable=False),
        sa.Column("subject_kind", sa.String(32), nullable=False),
        sa.Column("subject_id", sa.Integer(), nullable=False),
        sa.Column("registration", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("begin_time", sa.Integer(), nullable=False),
        sa.Column("end_time", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.String(500), nullable=True),
        sa.Column("device_user_id", sa.Integer(), nullable=True),
        sa.Column("idempotency_key", sa.String(200), nullable=False, unique=True),
        _at("created_at"), _at("last_attempt_at", True), _at("confirmed_at", True),
    )
    op.create_table(
        "pickup_notifications", _id(),
        sa.Column("guardian_id", sa.Integer(), nullable=False),
        sa.Column("student_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("message", sa.String(500), nullable=False),
        sa.Column("idempotency_key", sa.String(200), nullable=False, unique=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.String(500), nullable=True),
        _at("created_at"), _at("sent_at", True),
    )
    op.create_table(
        "pickup_queue_snapshots", _id(), _at("at"),
        sa.Column("queue", sa.String(32), nullable=False),
        sa.Column("pending", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("oldest_pending_seconds", sa.Float(), nullable=False),
    )


INDEXES = (
    ("ix_pickup_students_school", "pickup_students", ["school_id", "state"]),
    ("ix_pickup_students_state_since", "pickup_students", ["state", "state_since"]),
    ("ix_pickup_links_kind_until", "pickup_guardian_links", ["kind", "valid_until"]),
    ("ix_pickup_links_guardian", "pickup_guardian_links", ["guardian_id"]),
    ("ix_pickup_authorized_expiry", "pickup_authorized_persons", ["kind", "status", "valid_until"]),
    ("ix_pickup_authorized_student", "pickup_authorized_persons", ["student_id"]),
    ("ix_pickup_early_expiry", "pickup_early_releases", ["status", "valid_until"]),
    ("ix_pickup_access_tokens_expires_at", "pickup_access_tokens", ["expires_at"]),
    ("ix_pickup_arrivals_open", "pickup_arrivals", ["status", "expires_at"]),
    ("ix_pickup_audit_entity", "pickup_audit", ["entity", "entity_id"]),
    ("ix_pickup_events_school", "pickup_events", ["school_id", "id"]),
    ("ix_pickup_events_guardian", "pickup_events", ["guardian_id", "id"]),
    ("ix_pickup_events_student", "pickup_events", ["student_id", "id"]),
    ("ix_pickup_ledger_pending", "pickup_ledger", ["status", "controller", "id"]),
    ("ix_pickup_ledger_subject", "pickup_ledger", ["subject_kind", "subject_id"]),
    ("ix_pickup_ledger_device_user", "pickup_ledger", ["controller", "device_user_id"]),
    ("ix_pickup_notifications_status", "pickup_notifications", ["status", "id"]),
    ("ix_pickup_queue_snapshots_at", "pickup_queue_snapshots", ["at"]),
)
TABLES = (
    "pickup_queue_snapshots", "pickup_notifications", "pickup_ledger", "pickup_events",
    "pickup_audit", "pickup_arrivals", "pickup_access_tokens", "pickup_early_releases",
    "pickup_authorized_persons", "pickup_guardian_links", "pickup_guardians", "pickup_students",
    "pickup_schools",
)


def upgrade() -> None:
    _tables()
    _records()
    for name, table, columns in INDEXES:
        op.create_index(name, table, columns)


def downgrade() -> None:
    for name, table, _ in INDEXES:
        op.drop_index(name, table_name=table)
    for table in TABLES:
        op.drop_table(table)
