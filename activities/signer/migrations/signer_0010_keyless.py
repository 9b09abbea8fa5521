"""Signer: KEYLESS profiles — approvers sign at the Lacuna Signer, the host holds no key.

Revision ID: signer_0010
Revises: signer_0009
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "signer_0010"
down_revision = "signer_0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (no table rebuild), like signer_0003: who signs a profile's jobs.
    op.add_column("signing_profiles", sa.Column("signers", sa.String(16), nullable=False,
                                                server_default="Holder"))


def downgrade() -> None:
    op.drop_column("signing_profiles", "signers")
