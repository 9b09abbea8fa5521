"""The approvals migration creates exactly the tables and columns the models describe."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

import activities.signer.models.approvals  # registers the approval tables
import activities.signer.models.jobs  # noqa: F401
from shared.db.engine import create_engine

MINE = {"signer_job_approvals", "signer_approval_decisions", "signer_approver_tokens",
        "signer_notification_outbox", "signer_cnab240_lines"}


def _approval_objects(obj, name, type_, reflected, compare_to) -> bool:
    table = name if type_ == "table" else getattr(getattr(obj, "table", None), "name", "")
    if table == "signing_profiles":
        return type_ == "table" or name in ("approval", "check_cnab240_payment_dates")
    return table in MINE


def _diffs(connection) -> list:
    context = MigrationContext.configure(connection,
                                         opts={"include_object": _approval_objects})
    return compare_metadata(context, SQLModel.metadata)


async def test_migrated_schema_matches_the_models(database_url):
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            assert await connection.run_sync(_diffs) == []
    finally:
        await engine.dispose()
