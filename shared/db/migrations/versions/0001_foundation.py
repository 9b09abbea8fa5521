"""Foundation: pipeline state, operational events, instances.

Revision ID: 0001_foundation
Revises:
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0001_foundation"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pipeline_state",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("paused", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("reason", sa.String(), nullable=True),
        sa.Column("changed_by", sa.String(), nullable=True),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False, server_default="0"),
    )
    op.create_table(
        "operational_events",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("domain", sa.String(length=32), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("message", sa.String(), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=True),
        sa.Column("properties", sa.JSON(), nullable=False),
    )
    op.create_index("ix_operational_events_at", "operational_events", ["at"])
    op.create_index("ix_operational_events_type_at", "operational_events", ["type", "at"])
    op.create_table(
        "instances",
        sa.Column("instance_id", sa.String(length=200), primary_key=True),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("host", sa.String(length=200), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("version", sa.String(length=100), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("instances")
    op.drop_index("ix_operational_events_type_at", table_name="operational_events")
    op.drop_index("ix_operational_events_at", table_name="operational_events")
    op.drop_table("operational_events")
    op.drop_table("pipeline_state")
