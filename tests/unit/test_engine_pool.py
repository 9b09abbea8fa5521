"""A process keeps the connections a burst opened: opening one costs a thread and the pragmas
(SQLite) or a server process (PostgreSQL), far more than the statement it was opened for."""

from __future__ import annotations

import asyncio

from sqlalchemy import event, text

from shared.db.engine import create_engine, is_sqlite

WIDTH, ROUNDS = 12, 3


async def _bursts(url: str) -> tuple[int, int]:
    """Connections (opened, closed) over ROUNDS bursts of WIDTH held at once."""
    engine = create_engine(url)
    opened, closed = [], []
    event.listen(engine.sync_engine, "connect", lambda *_: opened.append(1))
    event.listen(engine.sync_engine.pool, "close", lambda *_: closed.append(1))

    async def one(together: asyncio.Barrier) -> None:
        async with engine.connect() as connection:
            assert (await connection.execute(text("SELECT 1"))).scalar() == 1
            await together.wait()  # every one of the burst holds its connection

    try:
        for _ in range(ROUNDS):
            together = asyncio.Barrier(WIDTH)
            await asyncio.gather(*(one(together) for _ in range(WIDTH)))
        return len(opened), len(closed)  # before dispose() closes the kept ones
    finally:
        await engine.dispose()


async def test_sqlite_keeps_every_connection_by_default_postgresql_only_ten(database_url):
    opened, closed = await _bursts(database_url)
    if is_sqlite(database_url):
        # The default pool (5) closed the other 7 after each burst and opened them again.
        assert (opened, closed) == (WIDTH, 0)
    else:
        # The server limits connections: the burst's extra ones are closed when they return.
        assert (opened, closed) == (10 + (WIDTH - 10) * ROUNDS, (WIDTH - 10) * ROUNDS)
