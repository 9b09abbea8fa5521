"""A SQLite file's write transactions, each run whole on one thread: one hand-off apiece.

Through the async engine every statement of a transaction is its own trip to aiosqlite's
thread and back (an UPDATE, an INSERT and the COMMIT: three wake-ups of each side), and those
hand-offs cost the worker more CPU than SQLite spends on the statements. Here the whole
transaction runs on the writer's thread through a synchronous engine on the same file, and
the event loop waits for it once. One thread and one connection are enough: SQLite lets one
writer in at a time, so the process's writes queued for the file's lock anyway.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.db.engine import apply_sqlite_pragmas

T = TypeVar("T")
_WRITERS: weakref.WeakKeyDictionary[Engine, SqliteWriter] = weakref.WeakKeyDictionary()


class SqliteWriter:
    """One thread and one connection that run write transactions on a SQLite file."""

    def __init__(self, url: URL) -> None:
        # The same file through the standard library's driver. Only the writer's thread uses
        # the connection and `close()` disposes of it there; the thread check is off so that a
        # writer dropped without `close()` (its engine collected undisposed) closes quietly.
        self.engine = create_engine(url.set(drivername="sqlite"), pool_size=1, max_overflow=0,
                                    connect_args={"timeout": 30, "check_same_thread": False})
        event.listen(self.engine, "connect", apply_sqlite_pragmas)
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="sqlite-writer")

    async def run(self, work: Callable[[Connection], T]) -> T:
        """`work` in one transaction on the writer's thread (committed unless it raises)."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, self._transaction,
                                                                work)

    def _transaction(self, work: Callable[[Connection], T]) -> T:
        with self.engine.connect() as connection, connection.begin():
            return work(connection)

    def close(self) -> None:
        """Close the connection once the queued transactions are done; stop the thread."""
        self._thread.submit(self.engine.dispose)
        self._thread.shutdown(wait=False)


def writer_for(engine: AsyncEngine) -> SqliteWriter | None:
    """The writer of `engine`'s SQLite file (made on first use); None for any other store."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None  # PostgreSQL, or an in-memory database no second connection could see
    key = engine.sync_engine
    writer = _WRITERS.get(key)
    if writer is None:
        writer = _WRITERS[key] = SqliteWriter(url)
        if not event.contains(key, "engine_disposed", _close_writer):
            event.listen(key, "engine_disposed", _close_writer)
    return writer


def _close_writer(engine: Engine) -> None:
    """`engine.dispose()` closes its writer too; a later write makes a new one."""
    writer = _WRITERS.pop(engine, None)
    if writer is not None:
        writer.close()
