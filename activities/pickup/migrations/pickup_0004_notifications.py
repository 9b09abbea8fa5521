"""Pickup: notification attempts — each notification backs off on its own.

Revision ID: pickup_0004
Revises: pickup_0003
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "pickup_0004"
down_revision = "pickup_0003"
branch_labels = None
depends_on = None

COLUMNS = ("next_attempt_at", "last_attempt_at")


def upgrade() -> None:
    for name in COLUMNS:
        op.add_column("pickup_notifications",
                      sa.Column(name, sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    # SQLite drops a column only by rebuilding the table.
    with op.batch_alter_table("pickup_notifications") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
