"""SISBAJUD: by when a human decision is due, and the legs a person's resolution moved.

Revision ID: sisbajud_0007
Revises: sisbajud_0006
Create Date: 2026-12-04
"""

import sqlalchemy as sa
from alembic import op

revision = "sisbajud_0007"
down_revision = "sisbajud_0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sisbajud_human_decisions") as batch:
        batch.add_column(sa.Column("decide_by", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("sisbajud_writes") as batch:
        batch.add_column(sa.Column("applied_legs", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sisbajud_writes") as batch:
        batch.drop_column("applied_legs")
    with op.batch_alter_table("sisbajud_human_decisions") as batch:
        batch.drop_column("decide_by")
