"""Signer: signature levels (B-T, B-LT, B-LTA), TSAs, cloud certificates, the archive registry.

Revision ID: signer_0011
Revises: signer_0010
Create Date: 2026-12-07
"""

import sqlalchemy as sa
from alembic import op

revision = "signer_0011"
down_revision = "signer_0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMNs (no table rebuild): existing profiles stay B-B, as they signed.
    op.add_column("signing_profiles", sa.Column("signature_level", sa.String(8), nullable=False,
                                                server_default="B-B"))
    op.add_column("signing_profiles", sa.Column("timestamp", sa.JSON(), nullable=True))
    op.add_column("signing_profiles", sa.Column("revocation_timeout_seconds", sa.Float(),
                                                nullable=False, server_default="10"))
    op.add_column("signing_profiles", sa.Column("csc", sa.JSON(), nullable=True))
    op.create_table(
        "signer_archive",
        sa.Column("name", sa.String(500), primary_key=True),
        sa.Column("path", sa.String(), nullable=False),
        sa.Column("level", sa.String(8), nullable=False),
        sa.Column("profile_name", sa.String(100), nullable=True),
        sa.Column("job_id", sa.String(36), nullable=True),
        sa.Column("timestamps", sa.Integer(), nullable=False, server_default="1"),
        sa.Column("tsa_expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("renewed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.String(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    # The renewal's scan: what expires first.
    op.create_index("ix_signer_archive_expiry", "signer_archive", ["tsa_expires_at"])


def downgrade() -> None:
    op.drop_index("ix_signer_archive_expiry", table_name="signer_archive")
    op.drop_table("signer_archive")
    with op.batch_alter_table("signing_profiles") as batch:
        batch.drop_column("csc")
        batch.drop_column("revocation_timeout_seconds")
        batch.drop_column("timestamp")
        batch.drop_column("signature_level")
