"""SISBAJUD: the orphan check's cursors and the indexes its reads use.

Revision ID: sisbajud_0004
Revises: sisbajud_0003
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "sisbajud_0004"
down_revision = "sisbajud_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sisbajud_orphan_scan",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("recent_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sweep_after", sa.String(100), nullable=True),
        sa.Column("failing_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_sisbajud_writes_updated_at", "sisbajud_writes", ["updated_at"])
    op.create_index("ix_sisbajud_writes_block_alias", "sisbajud_writes", ["block_alias"])


def downgrade() -> None:
    op.drop_index("ix_sisbajud_writes_block_alias", table_name="sisbajud_writes")
    op.drop_index("ix_sisbajud_writes_updated_at", table_name="sisbajud_writes")
    op.drop_table("sisbajud_orphan_scan")
