"""SISBAJUD: indeterminate writes, heartbeats, human resolutions, orphans, accounting routes.

Revision ID: sisbajud_0002
Revises: sisbajud_0001
Create Date: 2026-11-29
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "sisbajud_0002"
down_revision = "sisbajud_0001"
branch_labels = None
depends_on = None

DECISION_COLUMNS = ("resolved_by", "resolution_reason", "resolution")


def _ts(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    with op.batch_alter_table("sisbajud_human_decisions") as batch:
        batch.add_column(sa.Column("resolved_by", sa.String(200), nullable=True))
        batch.add_column(sa.Column("resolution_reason", sa.String(), nullable=True))
        batch.add_column(sa.Column("resolution", sa.JSON(), nullable=True))
    op.create_table(
        "sisbajud_orphans",
        sa.Column("operation_id", sa.String(64), nullable=False),
        sa.Column("transaction_id", sa.String(64), nullable=False),
        sa.Column("institution_id", sa.String(100), nullable=False),
        sa.Column("block_alias", sa.String(100), nullable=False),
        sa.Column("account_id", sa.String(64), nullable=False),
        sa.Column("code", sa.String(200), nullable=True),
        sa.Column("type", sa.String(16), nullable=True),
        sa.Column("direction", sa.String(8), nullable=True),
        sa.Column("amount", sa.String(40), nullable=True),
        _ts("operation_at"),
        _ts("found_at", nullable=False),
        sa.PrimaryKeyConstraint("operation_id"),
    )
    op.create_index("ix_sisbajud_orphans_block_alias", "sisbajud_orphans", ["block_alias"])
    op.create_index("ix_sisbajud_orphans_found_at", "sisbajud_orphans", ["found_at"])
    op.create_table(
        "sisbajud_routing_documents",
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("updated_by", sa.String(200), nullable=True),
        _ts("updated_at", nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )


def downgrade() -> None:
    op.drop_table("sisbajud_routing_documents")
    op.drop_table("sisbajud_orphans")
    with op.batch_alter_table("sisbajud_human_decisions") as batch:
        for name in DECISION_COLUMNS:
            batch.drop_column(name)
