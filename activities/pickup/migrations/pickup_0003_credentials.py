"""Pickup: grant credentials (cards / QR codes per school) and per-school monitor tokens.

Revision ID: pickup_0003
Revises: pickup_0002
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "pickup_0003"
down_revision = "pickup_0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pickup_credentials",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("school_id", sa.Integer(), sa.ForeignKey("pickup_schools.id"), nullable=False),
        sa.Column("holder_kind", sa.String(32), nullable=False),
        sa.Column("holder_id", sa.Integer(), nullable=False),
        sa.Column("card_value", sa.BigInteger(), nullable=True),
        sa.Column("qr_value", sa.String(200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )
    # Unique per school (NULLs never clash): a card or QR opens one holder's grant only.
    op.create_index("ux_pickup_credentials_card", "pickup_credentials",
                    ["school_id", "card_value"], unique=True)
    op.create_index("ux_pickup_credentials_qr", "pickup_credentials",
                    ["school_id", "qr_value"], unique=True)
    op.create_index("ux_pickup_credentials_holder", "pickup_credentials",
                    ["school_id", "holder_kind", "holder_id"], unique=True)
    op.add_column("pickup_ledger", sa.Column("card_value", sa.BigInteger(), nullable=True))
    op.add_column("pickup_ledger", sa.Column("qr_value", sa.String(200), nullable=True))
    op.add_column("pickup_schools",
                  sa.Column("monitor_token_hash", sa.String(64), nullable=True))
    op.create_index("ux_pickup_schools_monitor_token", "pickup_schools",
                    ["monitor_token_hash"], unique=True)


def downgrade() -> None:
    op.drop_index("ux_pickup_schools_monitor_token", table_name="pickup_schools")
    with op.batch_alter_table("pickup_schools") as batch:
        batch.drop_column("monitor_token_hash")
    with op.batch_alter_table("pickup_ledger") as batch:
        batch.drop_column("qr_value")
        batch.drop_column("card_value")
    op.drop_table("pickup_credentials")
