"""Signer: index the newest job of an original path (the watcher asks it for every file).

Revision ID: signer_0005
Revises: signer_0004
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "signer_0005"
down_revision = "signer_0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The unique index on lower(original_path) is partial (active jobs only), so it can't
    # answer "the latest job of this path, whatever its status": without this, a full scan.
    op.create_index("ix_jobs_original_path_lower", "jobs",
                    [sa.text("lower(original_path)"), "created_at"])


def downgrade() -> None:
    op.drop_index("ix_jobs_original_path_lower", table_name="jobs")
