"""The SQLite driver: one hand-off to aiosqlite's thread per statement, SQLAlchemy's results."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from shared.db.engine import create_engine


@pytest.fixture
async def engine(tmp_path):
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'driver.db'}")
    async with engine.begin() as connection:
        await connection.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)"))
    yield engine
    await engine.dispose()


class _CountingQueue:
    """Stands in for aiosqlite's queue on the loop's side; its thread still reads the real one."""

    def __init__(self, queue) -> None:
        self.queue = queue
        self.items: list[object] = []

    def put_nowait(self, item) -> None:
        self.items.append(item)
        self.queue.put_nowait(item)


async def _count_handoffs(connection) -> list[object]:
    """Record each function queued to the connection's aiosqlite thread from now on."""
    raw = (await connection.get_raw_connection()).driver_connection
    raw._tx = _CountingQueue(raw._tx)
    return raw._tx.items


async def test_a_transaction_hands_each_statement_and_its_commit_over_once(engine):
    async with engine.connect() as connection:
        queued = await _count_handoffs(connection)
        async with connection.begin():
            await connection.execute(text("INSERT INTO t (v) VALUES ('a')"))
            assert (await connection.execute(text("SELECT v FROM t"))).scalars().all() == ["a"]
            await connection.execute(text("UPDATE t SET v = 'b'"))
        # SQLAlchemy's own adapter queues four per SELECT (cursor, execute, fetch, close).
        assert len(queued) == 4


async def test_nothing_is_handed_over_to_end_a_transaction_that_wrote_nothing(engine):
    async with engine.connect() as connection:
        queued = await _count_handoffs(connection)
        async with connection.begin():
            await connection.execute(text("SELECT 1"))
        await connection.rollback()
        assert len(queued) == 1


async def test_rows_counts_and_ids_match_the_statement(engine):
    async with engine.begin() as connection:
        inserted = await connection.execute(text("INSERT INTO t (v) VALUES ('a')"))
        assert inserted.lastrowid == 1
        many = await connection.execute(text("INSERT INTO t (v) VALUES (:v)"),
                                        [{"v": "b"}, {"v": "c"}])
        assert many.rowcount == 2
        updated = await connection.execute(text("UPDATE t SET v = v || '!' WHERE id > 1"))
        assert updated.rowcount == 2
        returned = await connection.execute(
            text("UPDATE t SET v = 'z' WHERE id = 1 RETURNING id, v"))
        assert returned.all() == [(1, "z")]
        assert returned.rowcount == 1


async def test_a_rolled_back_write_is_gone_and_a_committed_one_stays(engine):
    async with engine.connect() as connection:
        await connection.execute(text("INSERT INTO t (v) VALUES ('kept')"))
        await connection.commit()
        await connection.execute(text("INSERT INTO t (v) VALUES ('dropped')"))
        await connection.rollback()
    async with engine.connect() as connection:
        assert (await connection.execute(text("SELECT v FROM t"))).scalars().all() == ["kept"]


async def test_a_constraint_violation_is_sqlalchemys_integrity_error(engine):
    async with engine.connect() as connection:
        await connection.execute(text("INSERT INTO t (v) VALUES ('a')"))
        with pytest.raises(IntegrityError):
            await connection.execute(text("INSERT INTO t (v) VALUES ('a')"))
        await connection.rollback()
        assert (await connection.execute(text("SELECT count(*) FROM t"))).scalar() == 0
