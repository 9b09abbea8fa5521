"""Signer: profiles, jobs, job history, input folder state.

Revision ID: signer_0001
Revises: 0001_foundation
Create Date: 2026-11-29
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "signer_0001"
down_revision = "0001_foundation"
branch_labels = ("signer",)
depends_on = None

ACTIVE = "status IN ('Queued','Processing','Verifying','AwaitingApproval','AwaitingSigner')"


def _ts(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "signing_profiles",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("cert_source", sa.String(16), nullable=False),
        sa.Column("pfx_path", sa.String(), nullable=True),
        sa.Column("pfx_password_env", sa.String(200), nullable=True),
        sa.Column("pfx_password_file", sa.String(), nullable=True),
        sa.Column("pkcs11_module", sa.String(), nullable=True),
        sa.Column("pkcs11_token_label", sa.String(200), nullable=True),
        sa.Column("pkcs11_thumbprint", sa.String(64), nullable=True),
        sa.Column("pkcs11_pin_env", sa.String(200), nullable=True),
        sa.Column("trust_roots", sa.JSON(), nullable=False),
        sa.Column("verify", sa.Boolean(), nullable=False),
        sa.Column("validate_certificate", sa.Boolean(), nullable=False),
        sa.Column("policy", sa.JSON(), nullable=True),
        sa.Column("encrypt", sa.Boolean(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("input_folder", sa.String(100), nullable=True, unique=True),
        sa.Column("is_dev", sa.Boolean(), nullable=False),
        _ts("created_at", False),
        _ts("updated_at", False),
        sa.Column("version", sa.Integer(), nullable=False),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("file_name", sa.String(500), nullable=False),
        sa.Column("original_path", sa.String(), nullable=False),
        sa.Column("folder", sa.String(100), nullable=True),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("profile_name", sa.String(100), nullable=True),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("error_code", sa.String(100), nullable=True),
        sa.Column("error_message", sa.String(), nullable=True),
        sa.Column("parent_job_id", sa.String(36), sa.ForeignKey("jobs.id"), nullable=True),
        sa.Column("input_size", sa.BigInteger(), nullable=True),
        sa.Column("input_sha256", sa.String(64), nullable=True),
        sa.Column("output_path", sa.String(), nullable=True),
        sa.Column("instance_id", sa.String(200), nullable=True),
        _ts("created_at", False),
        _ts("started_at"),
        _ts("workflow_started_at"),
        _ts("signing_started_at"),
        _ts("completed_at"),
        _ts("updated_at", False),
        sa.Column("version", sa.Integer(), nullable=False),
    )
    op.create_index("ux_jobs_active_original_path", "jobs", [sa.text("lower(original_path)")],
                    unique=True, sqlite_where=sa.text(ACTIVE), postgresql_where=sa.text(ACTIVE))
    op.create_index("ix_jobs_file_name_lower", "jobs", [sa.text("lower(file_name)"), "status"])
    op.create_index("ix_jobs_status_created", "jobs", ["status", "created_at"])
    op.create_index("ix_jobs_created", "jobs", ["created_at", "id"])
    op.create_index("ix_jobs_unstarted", "jobs", ["status", "workflow_started_at"])
    op.create_table(
        "job_history",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("job_id", sa.String(36), sa.ForeignKey("jobs.id", ondelete="CASCADE"),
                  nullable=False),
        _ts("at", False),
        sa.Column("from_status", sa.String(32), nullable=True),
        sa.Column("to_status", sa.String(32), nullable=True),
        sa.Column("code", sa.String(100), nullable=True),
        sa.Column("message", sa.String(), nullable=False),
    )
    op.create_index("ix_job_history_job_id", "job_history", ["job_id"])
    op.create_table(
        "input_folder_state",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("last_error", sa.String(), nullable=True),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        _ts("last_scan_at"),
        _ts("updated_at", False),
    )


def downgrade() -> None:
    op.drop_table("input_folder_state")
    op.drop_index("ix_job_history_job_id", table_name="job_history")
    op.drop_table("job_history")
    op.drop_index("ix_jobs_unstarted", table_name="jobs")
    op.drop_index("ix_jobs_created", table_name="jobs")
    op.drop_index("ix_jobs_status_created", table_name="jobs")
    op.drop_index("ix_jobs_file_name_lower", table_name="jobs")
    op.drop_index("ux_jobs_active_original_path", table_name="jobs")
    op.drop_table("jobs")
    op.drop_table("signing_profiles")
