"""Signer: Lacuna Signer remote documents and the SignerFolder registry.

Revision ID: signer_0003
Revises: signer_0002
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "signer_0003"
down_revision = "signer_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN (no table rebuild): SQLite would not carry the expression index over.
    op.add_column("signing_profiles", sa.Column("method", sa.String(16), nullable=False,
                                                server_default="Local"))
    op.add_column("signing_profiles", sa.Column("signer_flow", sa.JSON(), nullable=False,
                                                server_default="[]"))
    op.add_column("signing_profiles", sa.Column("signer_folder_id", sa.String(100),
                                                nullable=True))
    op.add_column("jobs", sa.Column("remote_document_id", sa.String(64), nullable=True))
    op.add_column("jobs", sa.Column("remote_flow_action_id", sa.String(64), nullable=True))
    op.create_index("ix_jobs_remote_document", "jobs", ["remote_document_id"])
    op.create_table(
        "signer_folder_registry",
        sa.Column("profile_name", sa.String(100), primary_key=True),
        sa.Column("document_id", sa.String(64), primary_key=True),
        sa.Column("flow_action_id", sa.String(64), primary_key=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("first_job_id", sa.String(36), nullable=True),
        sa.Column("discovered_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "signer_folder_scans",
        sa.Column("profile_name", sa.String(100), primary_key=True),
        sa.Column("folder_id", sa.String(100), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=False),
        sa.Column("detail", sa.String(), nullable=False),
        sa.Column("scanned_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("signer_folder_scans")
    op.drop_table("signer_folder_registry")
    op.drop_index("ix_jobs_remote_document", table_name="jobs")
    for table, column in (("jobs", "remote_flow_action_id"), ("jobs", "remote_document_id"),
                          ("signing_profiles", "signer_folder_id"),
                          ("signing_profiles", "signer_flow"), ("signing_profiles", "method")):
        op.drop_column(table, column)
