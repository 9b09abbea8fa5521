"""The pickup migration creates exactly the tables the models describe, on both stores."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

import activities.pickup.models  # noqa: F401  (registers the pickup tables)
from shared.db.engine import create_engine


def _only_pickup(obj, name, type_, reflected, compare_to) -> bool:
    table = name if type_ == "table" else getattr(getattr(obj, "table", None), "name", "")
    return table.startswith("pickup_")


def _pickup_diffs(connection) -> list:
    context = MigrationContext.configure(connection, opts={"include_object": _only_pickup})
    return compare_metadata(context, SQLModel.metadata)


async def test_migrated_schema_matches_the_models(database_url):
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            assert await connection.run_sync(_pickup_diffs) == []
    finally:
        await engine.dispose()
