"""Signer: LacunaSigner dispatch checkpoints (a lost worker resumes instead of failing).

Revision ID: signer_0006
Revises: signer_0005
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "signer_0006"
down_revision = "signer_0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "signer_lacuna_dispatches",
        sa.Column("job_id", sa.String(36), primary_key=True),
        sa.Column("document_name", sa.String(300), nullable=False),
        sa.Column("upload_id", sa.String(64), nullable=True),
        sa.Column("document_id", sa.String(64), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("signer_lacuna_dispatches")
