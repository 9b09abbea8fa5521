"""Health: what workers found (profile certificates, domain settings) for the API to read.

Revision ID: health_0001
Revises: 0001_foundation
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "health_0001"
down_revision = "0001_foundation"
branch_labels = ("health",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "worker_findings",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("detail", sa.String(), nullable=False),
        sa.Column("subject", sa.String(300), nullable=False),
        sa.Column("reporter", sa.String(200), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("worker_findings")
