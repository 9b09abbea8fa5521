"""Signer: indexes for the operator's job listing at a million rows.

Revision ID: signer_0004
Revises: signer_0003
Create Date: 2026-11-29
"""

from alembic import op

revision = "signer_0004"
down_revision = "signer_0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # `GET /api/jobs?status=…` reads newest first with a (created_at, id) keyset cursor: with
    # the id in the index a page is one range scan, without it every tie needs a sort step.
    op.create_index("ix_jobs_status_created_id", "jobs", ["status", "created_at", "id"])
    # The (status, created_at) index is a prefix of the new one: keeping it only costs writes.
    op.drop_index("ix_jobs_status_created", table_name="jobs")


def downgrade() -> None:
    op.create_index("ix_jobs_status_created", "jobs", ["status", "created_at"])
    op.drop_index("ix_jobs_status_created_id", table_name="jobs")
