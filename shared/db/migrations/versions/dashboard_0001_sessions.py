"""Dashboard: revoked sessions (logout ends a session everywhere) and sign-in failures.

Revision ID: dashboard_0001
Revises: 0001_foundation
Create Date: 2026-12-03
"""

import sqlalchemy as sa
from alembic import op

revision = "dashboard_0001"
down_revision = "0001_foundation"
branch_labels = ("dashboard",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dashboard_revoked_sessions",
        sa.Column("session_id", sa.String(64), primary_key=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_dashboard_revoked_sessions_expires_at", "dashboard_revoked_sessions",
                    ["expires_at"])
    op.create_table(
        "dashboard_sign_in_failures",
        sa.Column("operator", sa.String(100), primary_key=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("last_failure_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("dashboard_sign_in_failures")
    op.drop_table("dashboard_revoked_sessions")
