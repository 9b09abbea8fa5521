"""Signer: the pause row always exists, so a claim can lock it against a concurrent pause.

Revision ID: signer_0007
Revises: signer_0006
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "signer_0007"
down_revision = "signer_0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Version 0 reads as "never changed" (pipeline_control.pipeline_state); the first pause
    # then moves it to 1 through the usual conditional update.
    op.execute(sa.text(
        "INSERT INTO pipeline_state (id, paused, changed_at, version) "
        "SELECT 1, :paused, CURRENT_TIMESTAMP, 0 "
        "WHERE NOT EXISTS (SELECT 1 FROM pipeline_state WHERE id = 1)"
    ).bindparams(paused=False))


def downgrade() -> None:
    op.execute(sa.text("DELETE FROM pipeline_state WHERE id = 1 AND version = 0"))
