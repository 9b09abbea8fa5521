"""Both SQLite stores (ours and Temporal's) hold CPFs and amounts: 0600, side files too."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest
from sqlalchemy import text

from services.dev.supervisor import ChildSpec, Supervisor
from services.dev.temporal_server import PRIVATE_UMASK, dev_server_args
from shared.db.engine import create_engine
from shared.settings import Settings
from tests.support.ports import free_ports


@pytest.fixture(autouse=True)
def shell_umask():
    """What a shell gives: files 0644 unless the code says otherwise."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


async def _write(url: str) -> None:
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(text("CREATE TABLE IF NOT EXISTS t (x INTEGER)"))
            await connection.execute(text("INSERT INTO t VALUES (1)"))
        # Checked while the connection is open: the WAL and shared-memory files exist now.
        async with engine.connect() as connection:
            await connection.execute(text("SELECT x FROM t"))
            database = Path(url.split("///", 1)[1])
            files = [database, Path(f"{database}-wal"), Path(f"{database}-shm")]
            assert all(p.exists() for p in files)
            assert [_mode(p) for p in files] == [0o600] * 3
    finally:
        await engine.dispose()


async def test_a_new_store_and_its_wal_files_are_private(tmp_path):
    await _write(f"sqlite+aiosqlite:///{tmp_path / 'db' / 'esteira.db'}")


async def test_an_existing_world_readable_store_is_narrowed(tmp_path):
    database = tmp_path / "esteira.db"
    for path in (database, Path(f"{database}-wal")):
        path.touch()
        path.chmod(0o644)
    await _write(f"sqlite+aiosqlite:///{database}")


async def test_the_embedded_temporal_server_writes_its_database_private(tmp_path):
    temporal, ui = free_ports(2)
    settings = Settings(data_dir=tmp_path, ports={"temporal": temporal, "temporal_ui": ui})
    supervisor = Supervisor(lambda _line, _console: None)
    await supervisor.start(ChildSpec("temporal", dev_server_args(settings),
                                     foreign_output=True, umask=PRIVATE_UMASK))
    database = tmp_path / "temporal" / "temporal.db"
    try:
        for _ in range(300):
            if Path(f"{database}-wal").exists() and Path(f"{database}-shm").exists():
                break
            await asyncio.sleep(0.05)
        files = [database, Path(f"{database}-wal"), Path(f"{database}-shm")]
        assert [_mode(p) for p in files] == [0o600] * 3
    finally:
        await supervisor.stop()


def test_an_existing_temporal_database_is_narrowed_before_the_server_starts(tmp_path):
    database = tmp_path / "temporal" / "temporal.db"
    database.parent.mkdir()
    database.touch()
    database.chmod(0o644)
    dev_server_args(Settings(data_dir=tmp_path))
    assert _mode(database) == 0o600
