"""SISBAJUD executor: notices, orders, writes, outbox, institutions, alarms, human decisions.

Revision ID: sisbajud_0001
Revises: 0001_foundation
Create Date: 2026-11-30
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "sisbajud_0001"
down_revision = "0001_foundation"
branch_labels = ("sisbajud",)
depends_on = None


def _ts(name: str, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _s(name: str, length: int | None = None, nullable: bool = True) -> sa.Column[Any]:
    return sa.Column(name, sa.String(length), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "sisbajud_notices",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        _s("webhook_id", 200, nullable=False),
        _ts("received_at", nullable=False),
        _s("order_id", 100),
        sa.Column("revision", sa.Integer(), nullable=True),
        _s("state", 16, nullable=False),
        _s("reason"),
        _s("body"),
        sa.Column("skew_s", sa.Integer(), nullable=True),
        sa.Column("skewed", sa.Boolean(), nullable=False),
        sa.Column("secret_index", sa.Integer(), nullable=True),
        _ts("ingested_at"),
        sa.UniqueConstraint("webhook_id", name="uq_sisbajud_notices_webhook_id"),
    )
    op.create_index("ix_sisbajud_notices_state_id", "sisbajud_notices", ["state", "id"])
    op.create_index("ix_sisbajud_notices_order_id", "sisbajud_notices", ["order_id"])
    op.create_table(
        "sisbajud_orders",
        _s("order_id", 100, nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        _s("run_id", 100),
        _s("operation", 32),
        _s("institution_id", 100),
        _s("parent_order_id", 100),
        _s("document", 32),
        _s("requested_amount", 40),
        _s("executed_amount", 40),
        _s("state", 32, nullable=False),
        _s("execution_state", 32),
        _s("effect", 16),
        _s("reason_code", 32),
        _s("transaction_id", 64),
        _ts("deadline"),
        _s("detail"),
        _ts("created_at", nullable=False),
        _ts("updated_at", nullable=False),
        sa.PrimaryKeyConstraint("order_id"),
    )
    op.create_index("ix_sisbajud_orders_state", "sisbajud_orders", ["state"])
    op.create_index("ix_sisbajud_orders_parent_order_id", "sisbajud_orders", ["parent_order_id"])
    op.create_table(
        "sisbajud_writes",
        _s("idempotency_key", 140, nullable=False),
        _s("order_id", 100, nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        _s("kind", 16, nullable=False),
        _s("institution_id", 100, nullable=False),
        _s("block_alias", 100, nullable=False),
        _s("parent_order_id", 100),
        _s("total", 40, nullable=False),
        sa.Column("legs", sa.JSON(), nullable=False),
        _s("state", 16, nullable=False),
        _s("transaction_id", 64),
        _s("applied_amount", 40),
        sa.Column("replayed", sa.Boolean(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        _s("last_code", 16),
        _ts("created_at", nullable=False),
        _ts("updated_at", nullable=False),
        sa.PrimaryKeyConstraint("idempotency_key"),
    )
    op.create_index("ix_sisbajud_writes_order_id", "sisbajud_writes", ["order_id"])
    op.create_index("ix_sisbajud_writes_parent_order_id", "sisbajud_writes", ["parent_order_id"])
    op.create_table(
        "sisbajud_outbox",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        _s("idempotency_key", 160, nullable=False),
        _s("order_id", 100, nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        _s("state", 16, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        _ts("created_at", nullable=False),
        _ts("next_attempt_at", nullable=False),
        _ts("sent_at"),
        sa.Column("last_status", sa.Integer(), nullable=True),
        _s("last_error"),
        sa.UniqueConstraint("idempotency_key", name="uq_sisbajud_outbox_idempotency_key"),
    )
    op.create_index("ix_sisbajud_outbox_state_due", "sisbajud_outbox",
                    ["state", "next_attempt_at"])
    op.create_index("ix_sisbajud_outbox_order_id", "sisbajud_outbox", ["order_id"])
    op.create_table(
        "sisbajud_institutions",
        _s("institution_id", 100, nullable=False),
        _s("owner_subject", 200, nullable=False),
        _ts("created_at", nullable=False),
        sa.PrimaryKeyConstraint("institution_id"),
    )
    op.create_table(
        "sisbajud_alarms",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        _ts("at", nullable=False),
        _s("code", 64, nullable=False),
        _s("order_id", 100),
        _s("webhook_id", 200),
        _s("message", nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
    )
    op.create_index("ix_sisbajud_alarms_at", "sisbajud_alarms", ["at"])
    op.create_index("ix_sisbajud_alarms_code", "sisbajud_alarms", ["code"])
    op.create_table(
        "sisbajud_human_decisions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        _s("order_id", 100, nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        _s("reason", 64, nullable=False),
        _s("disposition", 64),
        _s("detail"),
        _ts("created_at", nullable=False),
        _ts("resolved_at"),
        sa.UniqueConstraint("order_id", "revision", "reason",
                            name="ux_sisbajud_human_decisions_order_reason"),
    )
    op.create_index("ix_sisbajud_human_decisions_order_id", "sisbajud_human_decisions",
                    ["order_id"])


def downgrade() -> None:
    for table in ("sisbajud_human_decisions", "sisbajud_alarms", "sisbajud_institutions",
                  "sisbajud_outbox", "sisbajud_writes", "sisbajud_orders", "sisbajud_notices"):
        op.drop_table(table)
