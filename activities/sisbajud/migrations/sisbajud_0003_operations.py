"""SISBAJUD operations: acknowledged alarms and orphans, proposed (two-person) resolutions.

Revision ID: sisbajud_0003
Revises: sisbajud_0002
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "sisbajud_0003"
down_revision = "sisbajud_0002"
branch_labels = None
depends_on = None

ACK_TABLES = ("sisbajud_alarms", "sisbajud_orphans")
ACK_COLUMNS = ("acknowledged_at", "acknowledged_by", "acknowledgement_reason")
PROPOSAL_COLUMNS = ("proposed_at", "proposed_by", "proposal_reason", "proposal")


def upgrade() -> None:
    for table in ACK_TABLES:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("acknowledged_at", sa.DateTime(timezone=True),
                                       nullable=True))
            batch.add_column(sa.Column("acknowledged_by", sa.String(200), nullable=True))
            batch.add_column(sa.Column("acknowledgement_reason", sa.String(), nullable=True))
    with op.batch_alter_table("sisbajud_human_decisions") as batch:
        batch.add_column(sa.Column("proposed_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("proposed_by", sa.String(200), nullable=True))
        batch.add_column(sa.Column("proposal_reason", sa.String(), nullable=True))
        batch.add_column(sa.Column("proposal", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sisbajud_human_decisions") as batch:
        for name in PROPOSAL_COLUMNS:
            batch.drop_column(name)
    for table in ACK_TABLES:
        with op.batch_alter_table(table) as batch:
            for name in ACK_COLUMNS:
                batch.drop_column(name)
