"""Worker findings: the migration matches the model; a finding is replaced, not appended."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

from shared.db.engine import create_engine, session_factory
from shared.findings import read_findings, record_finding


def _diffs(connection) -> list:
    context = MigrationContext.configure(connection, opts={
        "include_object": lambda obj, name, type_, *_: (
            name if type_ == "table" else getattr(getattr(obj, "table", None), "name", "")
        ) == "worker_findings"})
    return compare_metadata(context, SQLModel.metadata)


async def test_migrated_table_matches_the_model_and_keeps_the_latest(database_url):
    engine = create_engine(database_url)
    try:
        async with engine.connect() as connection:
            assert await connection.run_sync(_diffs) == []
        sessions = session_factory(engine)
        await record_finding(sessions, "domain:x", ok=False, detail="missing", reporter="w1")
        await record_finding(sessions, "domain:x", ok=True, detail="started", reporter="w2")
        found = await read_findings(sessions, ["domain:x", "domain:y"])
    finally:
        await engine.dispose()
    assert list(found) == ["domain:x"]
    assert (found["domain:x"].ok, found["domain:x"].reporter) == (True, "w2")
