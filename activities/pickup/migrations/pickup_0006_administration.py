"""Pickup: administration — roster keys (student registration, guardian CPF and school) and
edit revisions of students, guardians and links.

Revision ID: pickup_0006
Revises: pickup_0005
Create Date: 2026-12-01
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "pickup_0006"
down_revision = "pickup_0005"
branch_labels = None
depends_on = None


def _revision() -> sa.Column[Any]:
    return sa.Column("revision", sa.Integer(), nullable=False, server_default="0")


def upgrade() -> None:
    op.add_column("pickup_students", sa.Column("registration", sa.String(64), nullable=True))
    op.add_column("pickup_students", _revision())
    op.create_index("uq_pickup_students_registration", "pickup_students",
                    ["school_id", "registration"], unique=True)
    op.add_column("pickup_guardians", sa.Column("school_id", sa.Integer(), nullable=True))
    op.add_column("pickup_guardians", sa.Column("cpf", sa.String(11), nullable=True))
    op.add_column("pickup_guardians", _revision())
    op.create_index("uq_pickup_guardians_cpf", "pickup_guardians", ["cpf"], unique=True)
    op.create_index("ix_pickup_guardians_school", "pickup_guardians", ["school_id"])
    op.add_column("pickup_guardian_links", _revision())


def downgrade() -> None:
    op.drop_index("ix_pickup_guardians_school", table_name="pickup_guardians")
    op.drop_index("uq_pickup_guardians_cpf", table_name="pickup_guardians")
    op.drop_index("uq_pickup_students_registration", table_name="pickup_students")
    with op.batch_alter_table("pickup_guardian_links") as batch:
        batch.drop_column("revision")
    with op.batch_alter_table("pickup_guardians") as batch:
        batch.drop_column("revision")
        batch.drop_column("cpf")
        batch.drop_column("school_id")
    with op.batch_alter_table("pickup_students") as batch:
        batch.drop_column("revision")
        batch.drop_column("registration")
