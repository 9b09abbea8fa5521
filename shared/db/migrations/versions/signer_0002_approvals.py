"""Signer: approvals (rule snapshot, decisions, notification outbox) and CNAB240 breakdown.

Revision ID: signer_0002
Revises: signer_0001
Create Date: 2026-11-29
"""

revision = "signer_0002"
down_revision = "signer_0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
