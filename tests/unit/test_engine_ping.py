"""A pooled connection is pinged before use on PostgreSQL (a server can drop it), never on
SQLite (a file: a ping would be one more statement per session)."""

from __future__ import annotations

from sqlalchemy import text

from shared.db.engine import create_engine, is_sqlite, session_factory


async def test_only_postgresql_pings_a_pooled_connection(database_url):
    engine = create_engine(database_url)
    pings: list[object] = []
    ping = engine.dialect.do_ping

    def counted(dbapi_connection) -> bool:
        pings.append(dbapi_connection)
        return ping(dbapi_connection)

    engine.dialect.do_ping = counted  # type: ignore[method-assign]
    try:
        sessions = session_factory(engine)
        for _ in range(3):
            async with sessions() as session:
                assert (await session.execute(text("SELECT 2"))).scalar() == 2
    finally:
        await engine.dispose()
    # PostgreSQL: the first session opens a fresh connection, the next two reuse it.
    assert len(pings) == (0 if is_sqlite(database_url) else 2)
