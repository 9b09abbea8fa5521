"""Pickup: the school day — each school's time zone and day start, the last day closed by hand.

Revision ID: pickup_0002
Revises: pickup_0001
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "pickup_0002"
down_revision = "pickup_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Existing schools get the defaults of `activities/pickup/settings.py` (literals here: a
    # migration must not change when a default does).
    op.add_column("pickup_schools", sa.Column("time_zone", sa.String(64), nullable=False,
                                              server_default="America/Sao_Paulo"))
    op.add_column("pickup_schools", sa.Column("day_start", sa.String(5), nullable=False,
                                              server_default="00:00"))
    op.add_column("pickup_schools", sa.Column("closed_day", sa.Date(), nullable=True))
    # The day cycle looks for a school's students whose state predates the day's start.
    op.create_index("ix_pickup_students_school_since", "pickup_students",
                    ["school_id", "state_since"])


def downgrade() -> None:
    op.drop_index("ix_pickup_students_school_since", table_name="pickup_students")
    with op.batch_alter_table("pickup_schools") as batch:
        batch.drop_column("closed_day")
        batch.drop_column("day_start")
        batch.drop_column("time_zone")
