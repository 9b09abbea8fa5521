"""Signer: signature policies from the ICP-Brasil catalogue, with the operator's policy document.

`signing_profiles.policy_name` names a catalogue policy (e.g. AD-RB; the profile's format picks
the PAdES, CAdES or XAdES entry), `policy_document` is the path of the policy file the operator
supplies and `policy_digest` the SHA-256 ITI publishes for it, checked when a worker boots.

Revision ID: signer_0009
Revises: signer_0008
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "signer_0009"
down_revision = "signer_0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMNs (no table rebuild), like signer_0003.
    op.add_column("signing_profiles", sa.Column("policy_name", sa.String(32), nullable=True))
    op.add_column("signing_profiles", sa.Column("policy_document", sa.String(), nullable=True))
    op.add_column("signing_profiles", sa.Column("policy_digest", sa.String(88), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("signing_profiles") as batch:
        batch.drop_column("policy_digest")
        batch.drop_column("policy_document")
        batch.drop_column("policy_name")
