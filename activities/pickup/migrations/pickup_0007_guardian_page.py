"""Pickup: the guardian page — one-time sign-in links, their request counts, and the kind of
a guardian's access token (the app's bearer token or the page's cookie session).

Revision ID: pickup_0007
Revises: pickup_0006
Create Date: 2026-12-15
"""

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "pickup_0007"
down_revision = "pickup_0006"
branch_labels = None
depends_on = None


def _at(name: str, nullable: bool = False) -> sa.Column[Any]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.add_column("pickup_access_tokens", sa.Column("kind", sa.String(16), nullable=False,
                                                    server_default="app"))
    op.create_table(
        "pickup_sign_in_links",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("guardian_id", sa.Integer(), sa.ForeignKey("pickup_guardians.id"),
                  nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        _at("created_at"), _at("expires_at"), _at("used_at", nullable=True),
    )
    op.create_index("ix_pickup_sign_in_links_guardian_id", "pickup_sign_in_links",
                    ["guardian_id"])
    op.create_index("ix_pickup_sign_in_links_expires_at", "pickup_sign_in_links",
                    ["expires_at"])
    op.create_table(
        "pickup_sign_in_requests",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.String(80), nullable=False),
        _at("at"),
    )
    op.create_index("ix_pickup_sign_in_requests_key", "pickup_sign_in_requests", ["key", "at"])


def downgrade() -> None:
    op.drop_table("pickup_sign_in_requests")
    op.drop_table("pickup_sign_in_links")
    with op.batch_alter_table("pickup_access_tokens") as batch:
        batch.drop_column("kind")
