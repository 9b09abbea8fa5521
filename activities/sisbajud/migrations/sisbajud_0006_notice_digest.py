"""SISBAJUD: the SHA-256 of each signed delivery's body, to tell a reused webhook-id.

Revision ID: sisbajud_0006
Revises: sisbajud_0005
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "sisbajud_0006"
down_revision = "sisbajud_0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("sisbajud_notices", sa.Column("body_sha256", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("sisbajud_notices") as batch:
        batch.drop_column("body_sha256")
