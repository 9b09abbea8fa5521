"""Pickup: live stream order — each broadcast gets `seq`, its position in commit order.

PostgreSQL hands out `id` at INSERT, so ids commit out of order: a reader that served id 11
before the transaction holding id 10 committed would skip 10 for good. `seq` is taken instead
at COMMIT, by a deferred constraint trigger holding a transaction-scoped advisory lock; that
lock is released only after the commit is visible, so no reader can see a higher `seq`
before every lower one that committed. A transaction rolled back after taking a value leaves
a hole nobody waits for. SQLite has a single writer, holding the database lock from its first
insert to its commit, so its ids already commit in order: there `seq` is the id (the table is
append-only, so SQLite never reuses an id).

Revision ID: pickup_0005
Revises: pickup_0004
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "pickup_0005"
down_revision = "pickup_0004"
branch_labels = None
depends_on = None

# Any constant bigint; only the transactions that write broadcasts take it, at their commit.
LOCK_KEY = 4_802_511_005
FEEDS = (("ix_pickup_events_school", "school_id"), ("ix_pickup_events_guardian", "guardian_id"),
         ("ix_pickup_events_student", "student_id"))

POSTGRES_UP = (
    "CREATE SEQUENCE pickup_events_seq_seq AS bigint OWNED BY pickup_events.seq",
    "SELECT setval('pickup_events_seq_seq', "
    "coalesce((SELECT max(seq) FROM pickup_events), 0) + 1, false)",
    f"""CREATE FUNCTION pickup_events_assign_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock({LOCK_KEY});
    UPDATE pickup_events SET seq = nextval('pickup_events_seq_seq') WHERE id = NEW.id;
    RETURN NULL;
END $$""",
    "CREATE CONSTRAINT TRIGGER pickup_events_seq AFTER INSERT ON pickup_events "
    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pickup_events_assign_seq()",
)
POSTGRES_DOWN = (
    "DROP TRIGGER pickup_events_seq ON pickup_events",
    "DROP FUNCTION pickup_events_assign_seq()",
)
SQLITE_UP = ("CREATE TRIGGER pickup_events_seq AFTER INSERT ON pickup_events FOR EACH ROW "
             "BEGIN UPDATE pickup_events SET seq = NEW.id WHERE id = NEW.id; END",)
SQLITE_DOWN = ("DROP TRIGGER pickup_events_seq",)


def _postgres() -> bool:
    return op.get_bind().dialect.name == "postgresql"


def upgrade() -> None:
    op.add_column("pickup_events", sa.Column("seq", sa.BigInteger(), nullable=True))
    op.execute("UPDATE pickup_events SET seq = id")
    for name, column in FEEDS:
        op.drop_index(name, table_name="pickup_events")
        op.create_index(name, "pickup_events", [column, "seq"])
    op.create_index("ix_pickup_events_seq", "pickup_events", ["seq"], unique=True)
    for statement in POSTGRES_UP if _postgres() else SQLITE_UP:
        op.execute(statement)


def downgrade() -> None:
    for statement in POSTGRES_DOWN if _postgres() else SQLITE_DOWN:
        op.execute(statement)
    op.drop_index("ix_pickup_events_seq", table_name="pickup_events")
    for name, column in FEEDS:
        op.drop_index(name, table_name="pickup_events")
        op.create_index(name, "pickup_events", [column, "id"])
    with op.batch_alter_table("pickup_events") as batch:
        batch.drop_column("seq")
