"""Signer: an instance an operator stood down stays stood down across restarts.

`instances.instance_name` names the cluster instance (`Cluster:InstanceName`) a process
belongs to; `instance_controls` holds the operator's stand-down flag per instance name.

Revision ID: signer_0008
Revises: signer_0007
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "signer_0008"
down_revision = "signer_0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("instances", sa.Column("instance_name", sa.String(length=200), nullable=True))
    op.create_index("ix_instances_instance_name", "instances", ["instance_name"])
    op.create_table(
        "instance_controls",
        sa.Column("name", sa.String(length=200), primary_key=True),
        sa.Column("stood_down", sa.Boolean(), nullable=False),
        sa.Column("changed_by", sa.String(length=200), nullable=True),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("instance_controls")
    op.drop_index("ix_instances_instance_name", table_name="instances")
    with op.batch_alter_table("instances") as batch:
        batch.drop_column("instance_name")
