"""SISBAJUD: who resolved a write without proof, and the ledger proof shown on a decision.

Revision ID: sisbajud_0005
Revises: sisbajud_0004
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "sisbajud_0005"
down_revision = "sisbajud_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sisbajud_writes") as batch:
        batch.add_column(sa.Column("resolved_by", sa.String(200), nullable=True))
        batch.add_column(sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("sisbajud_human_decisions") as batch:
        batch.add_column(sa.Column("proof_found_at", sa.DateTime(timezone=True),
                                   nullable=True))
        batch.add_column(sa.Column("ledger_proof", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sisbajud_human_decisions") as batch:
        batch.drop_column("ledger_proof")
        batch.drop_column("proof_found_at")
    with op.batch_alter_table("sisbajud_writes") as batch:
        batch.drop_column("resolved_at")
        batch.drop_column("resolved_by")
