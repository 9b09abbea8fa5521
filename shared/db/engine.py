"""Async engine and sessions for SQLite (WAL) and PostgreSQL (asyncpg)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.db.sqlite_driver import OneHopDBAPI
from shared.private_files import make_sqlite_private

# What every store reader and writer receives: one factory of sessions on the process's engine.
Sessions = async_sessionmaker[AsyncSession]

SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    # NORMAL with WAL loses at most the last commits on power loss, never corrupts.
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    # Several processes (API, workers, watcher) write the same file: wait instead of failing.
    "PRAGMA busy_timeout=10000",
)
# A pool closes each connection above its size when it comes back, and opening one costs far
# more than a statement (a thread and the pragmas). No server counts SQLite's connections, so
# every one opened is kept, up to the cap the default pool had (5 + 10 overflow). PostgreSQL
# keeps 10 and closes the burst's extra ones: its server limits connections.
SQLITE_CONNECTIONS = 15


def is_sqlite(url: str) -> bool:
    """True for a SQLite URL."""
    return make_url(url).get_backend_name() == "sqlite"


def create_engine(url: str, *, echo: bool = False) -> AsyncEngine:
    """An engine for `url`; SQLite gets its directory, a 0600 file and WAL pragmas."""
    if is_sqlite(url):
        database = make_url(url).database
        sizing = {}  # in memory: one connection, SQLAlchemy's StaticPool
        if database and database != ":memory:":
            make_sqlite_private(Path(database))
            sizing = {"pool_size": SQLITE_CONNECTIONS, "max_overflow": 0}
        engine = create_async_engine(url, echo=echo, module=OneHopDBAPI(),
                                     connect_args={"timeout": 30}, **sizing)
        event.listen(engine.sync_engine, "connect", apply_sqlite_pragmas)
        return engine
    return create_async_engine(url, echo=echo, pool_pre_ping=True, pool_size=10, max_overflow=10)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions that keep loaded objects usable after commit."""
    return async_sessionmaker(engine, class_=AsyncSession, expire_on_commit=False)


def describe_store(url: str) -> str:
    """`SQLite (/path/esteira.db)` or `PostgreSQL (host:port/db)`, never the password."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return f"SQLite ({parsed.database})"
    return f"PostgreSQL ({parsed.host}:{parsed.port or 5432}/{parsed.database})"


def apply_sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """WAL, foreign keys and the busy wait on each new SQLite connection."""
    cursor = dbapi_connection.cursor()
    for pragma in SQLITE_PRAGMAS:
        cursor.execute(pragma)
    cursor.close()
