"""A SQLite file's write transactions run whole on one writer thread, one hand-off apiece."""

from __future__ import annotations

import asyncio
import threading

import pytest
from sqlalchemy import event, text

from shared.db.engine import create_engine
from shared.db.sqlite_writer import writer_for


@pytest.fixture
async def engine(tmp_path):
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'store.db'}")
    async with engine.begin() as connection:
        await connection.execute(text("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)"))
    yield engine
    await engine.dispose()


async def _names(engine) -> list[str]:
    async with engine.connect() as connection:
        return list((await connection.execute(text("SELECT name FROM items ORDER BY id")))
                    .scalars())


async def test_a_transaction_runs_whole_on_the_writer_thread_and_the_engine_reads_it(engine):
    writer = writer_for(engine)
    threads: list[str] = []
    through_the_engine: list[str] = []
    event.listen(engine.sync_engine, "before_cursor_execute",
                 lambda *args: through_the_engine.append(args[2]))

    def work(connection) -> int:
        threads.append(threading.current_thread().name)
        connection.execute(text("INSERT INTO items (name) VALUES ('a')"))
        connection.execute(text("INSERT INTO items (name) VALUES ('b')"))
        return 2

    assert await writer.run(work) == 2
    assert threads == [threads[0]] and threads[0].startswith("sqlite-writer")
    assert through_the_engine == []  # no statement took the per-statement road
    assert await _names(engine) == ["a", "b"]
    assert writer_for(engine) is writer  # one writer per engine


async def test_a_transaction_that_raises_writes_nothing(engine):
    def work(connection) -> None:
        connection.execute(text("INSERT INTO items (name) VALUES ('lost')"))
        raise RuntimeError("refused half way")

    with pytest.raises(RuntimeError, match="half way"):
        await writer_for(engine).run(work)
    assert await _names(engine) == []


async def test_concurrent_transactions_queue_for_the_one_writer(engine):
    writer = writer_for(engine)
    inside, overlaps = [0], [0]

    def work(name: str):
        def write(connection) -> None:
            inside[0] += 1
            overlaps[0] = max(overlaps[0], inside[0])
            connection.execute(text("INSERT INTO items (name) VALUES (:n)"), {"n": name})
            inside[0] -= 1
        return write

    await asyncio.gather(*(writer.run(work(f"n{i}")) for i in range(40)))
    assert overlaps[0] == 1
    assert sorted(await _names(engine)) == sorted(f"n{i}" for i in range(40))


async def test_disposing_the_engine_closes_its_writer_and_a_later_write_gets_a_new_one(engine):
    first = writer_for(engine)
    await first.run(lambda c: c.execute(text("INSERT INTO items (name) VALUES ('before')")))
    closed: list[int] = []
    event.listen(first.engine.pool, "close", lambda *_: closed.append(1))
    await engine.dispose()
    for _ in range(200):  # closed on the writer's thread, after what was queued before it
        if closed:
            break
        await asyncio.sleep(0.05)
    assert closed == [1]  # the writer's connection went with the engine's
    second = writer_for(engine)
    assert second is not first
    await second.run(lambda c: c.execute(text("INSERT INTO items (name) VALUES ('after')")))
    assert await _names(engine) == ["before", "after"]


def test_only_a_sqlite_file_has_a_writer(tmp_path):
    assert writer_for(create_engine("sqlite+aiosqlite:///:memory:")) is None
    assert writer_for(create_engine("postgresql+asyncpg://u:p@127.0.0.1:1/db")) is None
