"""Signer: approvals (rule snapshot, decisions, notification outbox) and CNAB240 breakdown.

Revision ID: signer_0002
Revises: signer_0001
Create Date: 2026-11-29
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "signer_0002"
down_revision = "signer_0001"
branch_labels = None
depends_on = None


def _ts(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _job(primary_key: bool = False) -> sa.Column[Any]:
    return sa.Column("job_id", sa.String(36), sa.ForeignKey("jobs.id", ondelete="CASCADE"),
                     primary_key=primary_key, nullable=False)


def upgrade() -> None:
    with op.batch_alter_table("signing_profiles") as batch:
        batch.add_column(sa.Column("approval", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("check_cnab240_payment_dates", sa.Boolean(), nullable=False,
                                   server_default=sa.true()))
    op.create_table(
        "signer_job_approvals",
        _job(primary_key=True),
        sa.Column("profile_name", sa.String(100), nullable=False),
        sa.Column("rule", sa.JSON(), nullable=False),
        sa.Column("quorum", sa.Integer(), nullable=False),
        sa.Column("staged_path", sa.String(), nullable=False),
        sa.Column("staged_size", sa.BigInteger(), nullable=False),
        sa.Column("staged_sha256", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        _ts("requested_at", False),
        _ts("expires_at"),
        _ts("ended_at"),
    )
    op.create_table(
        "signer_approval_decisions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        _job(),
        sa.Column("approver", sa.String(200), nullable=False),
        sa.Column("email_masked", sa.String(320), nullable=False),
        sa.Column("decision", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(), nullable=True),
        _ts("at", False),
        sa.UniqueConstraint("job_id", "approver", name="ux_approval_decision_once"),
    )
    op.create_index("ix_signer_approval_decisions_job_id", "signer_approval_decisions",
                    ["job_id"])
    op.create_table(
        "signer_approver_tokens",
        sa.Column("token_sha256", sa.String(64), primary_key=True),
        _job(),
        sa.Column("approver", sa.String(200), nullable=False),
        sa.Column("email", sa.String(320), nullable=False),
        _ts("created_at", False),
    )
    op.create_index("ix_signer_approver_tokens_job_id", "signer_approver_tokens", ["job_id"])
    op.create_table(
        "signer_notification_outbox",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        _job(),
        sa.Column("to_address", sa.String(320), nullable=False),
        sa.Column("subject", sa.String(300), nullable=False),
        sa.Column("body", sa.String(), nullable=True),
        _ts("created_at", False),
        _ts("sent_at"),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.String(), nullable=True),
    )
    op.create_index("ix_signer_notification_outbox_job_id", "signer_notification_outbox",
                    ["job_id"])
    op.create_table(
        "signer_cnab240_lines",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        _job(),
        sa.Column("line_no", sa.Integer(), nullable=False),
        sa.Column("record_type", sa.String(1), nullable=False),
        sa.Column("segment", sa.String(1), nullable=True),
        sa.Column("movement", sa.String(1), nullable=True),
        sa.Column("payment_date", sa.Date(), nullable=True),
        sa.Column("amount_cents", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_signer_cnab240_lines_job_id", "signer_cnab240_lines", ["job_id"])


def downgrade() -> None:
    for table in ("signer_cnab240_lines", "signer_notification_outbox", "signer_approver_tokens",
                  "signer_approval_decisions"):
        op.drop_index(f"ix_{table}_job_id", table_name=table)
        op.drop_table(table)
    op.drop_table("signer_job_approvals")
    with op.batch_alter_table("signing_profiles") as batch:
        batch.drop_column("check_cnab240_payment_dates")
        batch.drop_column("approval")
