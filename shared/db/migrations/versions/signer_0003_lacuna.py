"""Signer: Lacuna Signer remote documents and the SignerFolder registry.

Revision ID: signer_0003
Revises: signer_0002
Create Date: 2026-11-29
"""

revision = "signer_0003"
down_revision = "signer_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
