"""Alembic environment: runs migrations over the async engine for either backend."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

import shared.db.models  # noqa: F401  (registers the tables on SQLModel.metadata)
from shared.db.engine import create_engine, is_sqlite

target_metadata = SQLModel.metadata


def _run(sync_connection: Connection) -> None:
    context.configure(
        connection=sync_connection,
        target_metadata=target_metadata,
        # SQLite can't ALTER most things in place; batch mode rebuilds tables instead.
        render_as_batch=is_sqlite(str(sync_connection.engine.url)),
    )
    with context.begin_transaction():
        context.run_migrations()


async def _migrate(url: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
            await connection.commit()
    finally:
        await engine.dispose()


asyncio.run(_migrate(context.config.attributes["url"]))
