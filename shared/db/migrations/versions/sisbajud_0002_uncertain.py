"""SISBAJUD: indeterminate writes, heartbeats, human resolutions, orphans, accounting routes.

Revision ID: sisbajud_0002
Revises: sisbajud_0001
Create Date: 2026-11-29
"""

revision = "sisbajud_0002"
down_revision = "sisbajud_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
