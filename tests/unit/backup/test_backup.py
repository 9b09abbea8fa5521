"""`esteira backup`: consistent store copies while writers run, every needed file, nothing else."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
import threading
from pathlib import Path

import pytest

from activities.signer.models.jobs import SigningProfile
from services.backup.archive import MANIFEST
from services.backup.layout import PAYLOAD_KEYS, STORE, TEMPORAL
from services.cli import main
from shared.db.engine import create_engine, session_factory
from tests.unit.backup.support import (
    FILES,
    RUNTIME,
    backup_to,
    count_rows,
    make_host,
    manifest_of,
    members,
)

BATCH = 50


def _store_copy(archive: Path, name: str, target: Path) -> Path:
    target.write_bytes(members(archive)[name])
    return target


def test_the_archive_holds_both_stores_keys_pki_and_storage_and_no_runtime_state(tmp_path):
    settings = make_host(tmp_path)
    archive = tmp_path / "backup.tar"
    manifest = backup_to(settings, archive)
    expected = {f"data/{name}" for name in FILES
                if not name.startswith((*RUNTIME, "storage/", "keys/temporal-payload.keys"))}
    expected |= {f"storage/{name.removeprefix('storage/')}" for name in FILES
                 if name.startswith("storage/")}
    expected |= {STORE, TEMPORAL, f"{PAYLOAD_KEYS}/temporal-payload.keys"}
    found = members(archive)
    assert set(found) == expected | {MANIFEST}
    assert {entry.name for entry in manifest.files} == expected
    for entry in manifest.files:
        assert entry.size == len(found[entry.name])
        assert entry.sha256 == hashlib.sha256(found[entry.name]).hexdigest()
    modes = {entry.name: entry.mode for entry in manifest.files}
    assert modes["data/keys/bsenc.salt"] == "0600" and modes["data/pki/ca.pem"] == "0644"
    assert (manifest.store, manifest.temporal, manifest.format) == ("sqlite", "embedded", 1)
    assert manifest.created_at and manifest.esteira_version


def test_rows_still_in_the_write_ahead_log_are_in_the_copy(tmp_path):
    """A copy of the database file alone would miss every row not yet checkpointed."""
    settings = make_host(tmp_path)
    store = settings.data_dir / "db" / "esteira.db"
    holder = sqlite3.connect(store)
    try:
        holder.execute("PRAGMA wal_autocheckpoint=0")
        holder.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(500)])
        holder.commit()
        assert Path(f"{store}-wal").stat().st_size > 0
        archive = tmp_path / "backup.tar"
        backup_to(settings, archive)
    finally:
        holder.close()
    assert count_rows(_store_copy(archive, STORE, tmp_path / "copy.db")) == 510


def test_a_backup_taken_while_a_writer_commits_is_a_consistent_snapshot(tmp_path):
    settings = make_host(tmp_path)
    store = settings.data_dir / "temporal" / "temporal.db"
    with contextlib.closing(sqlite3.connect(store)) as connection:
        connection.execute("DELETE FROM t")
        connection.commit()
    stop, committed = threading.Event(), []

    def write() -> None:
        with contextlib.closing(sqlite3.connect(store, timeout=30)) as writer:
            while not stop.is_set():
                with writer:  # one transaction per batch: a snapshot holds whole batches
                    writer.executemany("INSERT INTO t VALUES (?)",
                                       [(i,) for i in range(BATCH)])
                committed.append(BATCH)

    thread = threading.Thread(target=write)
    thread.start()
    try:
        counts = []
        for attempt in range(3):
            archive = tmp_path / f"backup-{attempt}.tar"
            backup_to(settings, archive)
            copy = _store_copy(archive, TEMPORAL, tmp_path / f"copy-{attempt}.db")
            with contextlib.closing(sqlite3.connect(copy)) as connection:
                assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            counts.append(count_rows(copy))
    finally:
        stop.set()
        thread.join()
    assert all(count % BATCH == 0 for count in counts), counts
    assert counts[-1] > 0 and counts == sorted(counts)


def test_a_corrupt_store_is_not_archived(tmp_path, capsys, monkeypatch):
    settings = make_host(tmp_path)
    store = settings.data_dir / "db" / "esteira.db"
    with contextlib.closing(sqlite3.connect(store)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("CREATE TABLE big (x TEXT)")
        connection.executemany("INSERT INTO big VALUES (?)", [("x" * 500,)] * 200)
        connection.commit()
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = bytearray(store.read_bytes())
    raw[4096 * 3:4096 * 3 + 200] = b"\xff" * 200  # a page of the big table's b-tree
    store.write_bytes(bytes(raw))
    monkeypatch.setenv("ESTEIRA_DATA_DIR", str(settings.data_dir))
    monkeypatch.chdir(tmp_path)
    assert main(["backup", "-o", str(tmp_path / "out.tar.gz")]) == 1
    error = capsys.readouterr().err
    assert error.startswith(f"esteira backup: could not copy {store}") or \
        "fails SQLite's quick_check" in error
    assert len(error.strip().splitlines()) == 1
    assert not list(tmp_path.glob("*out.tar.gz*")), "no partial archive is left behind"


def test_the_command_writes_a_private_archive_and_says_what_it_holds(tmp_path, capsys,
                                                                      monkeypatch):
    settings = make_host(tmp_path)
    monkeypatch.setenv("ESTEIRA_DATA_DIR", str(settings.data_dir))
    assert main(["backup", "-o", f"{tmp_path}/backups/"]) == 0
    (archive,) = (tmp_path / "backups").glob("esteira-backup-*.tar.gz")
    assert archive.stat().st_mode & 0o777 == 0o600
    report = capsys.readouterr().out
    assert f"Backed up to {archive}" in report
    assert "store/esteira.db: 1 file(s)" in report and "temporal/temporal.db" in report
    assert "storage/: 2 file(s)" in report
    assert manifest_of(archive).files


def test_without_a_store_file_yet_the_backup_says_so(tmp_path):
    settings = make_host(tmp_path)
    (settings.data_dir / "db" / "esteira.db").unlink()
    manifest = backup_to(settings, tmp_path / "backup.tar")
    assert STORE not in {entry.name for entry in manifest.files}
    assert any(note.startswith(f"{STORE}: no database") for note in manifest.not_included)
    assert not (settings.data_dir / "db" / "esteira.db").exists(), "never created by a backup"


def test_in_external_mode_temporal_is_named_as_not_included(tmp_path):
    settings = make_host(tmp_path, temporal_server={"mode": "external"},
                         temporal={"address": "temporal.example:7233"})
    manifest = backup_to(settings, tmp_path / "backup.tar")
    names = {entry.name for entry in manifest.files}
    assert TEMPORAL not in names and not any(n.startswith("data/temporal") for n in names)
    assert manifest.temporal == "external"
    assert any("temporal.example:7233" in note for note in manifest.not_included)


async def _add_profile(url: str, pfx: Path, trust_root: Path) -> None:
    engine = create_engine(url)
    try:
        async with session_factory(engine)() as session:
            session.add(SigningProfile(name="real", pfx_path=str(pfx),
                                       pfx_password_env="REAL_PFX_PASSWORD",
                                       trust_roots=[str(trust_root)]))
            await session.commit()
    finally:
        await engine.dispose()


def test_files_named_by_signing_profiles_outside_the_data_directory_are_included(
        tmp_path, settings, backend):
    outside = tmp_path / "etc" / "certs"
    outside.mkdir(parents=True)
    pfx, trust_root = outside / "real.pfx", outside / "icp-root.pem"
    pfx.write_bytes(b"pfx bytes")
    pfx.chmod(0o600)
    trust_root.write_bytes(b"root")
    asyncio.run(_add_profile(settings.sqlalchemy_url, pfx, trust_root))
    archive = tmp_path / "backup.tar"
    manifest = backup_to(settings, archive)
    found = members(archive)
    assert found[f"external{pfx}"] == b"pfx bytes" and found[f"external{trust_root}"] == b"root"
    # The dev profile's files live in data/pki: archived once, as part of the data tree.
    assert not any(name.startswith(f"external{settings.data_dir}") for name in found)
    if backend == "postgres":
        assert manifest.store == "postgresql" and STORE not in found
        (note,) = [n for n in manifest.not_included if "operational store" in n]
        assert "PostgreSQL" in note and "pg_dump" in note


@pytest.mark.parametrize("backend", ["postgres"])
def test_a_postgresql_store_is_named_with_the_pg_dump_pointer(tmp_path, capsys, monkeypatch,
                                                               settings, backend):
    monkeypatch.setenv("ESTEIRA_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("ESTEIRA_DATABASE_URL", settings.database_url.get_secret_value())
    assert main(["backup", "-o", str(tmp_path / "b.tar.gz")]) == 0
    report = capsys.readouterr().out
    lines = report.splitlines()
    start = lines.index("Not in this archive:")
    assert any("operational store, PostgreSQL" in line and "pg_dump" in line
               for line in lines[start:])
    assert "store/esteira.db" not in report and "temporal/temporal.db" in report


@pytest.mark.parametrize("inside", ["data/backups/", "data/storage/b.tar.gz"])
def test_an_archive_inside_what_it_archives_is_refused(tmp_path, capsys, monkeypatch, inside):
    settings = make_host(tmp_path)
    monkeypatch.setenv("ESTEIRA_DATA_DIR", str(settings.data_dir))
    assert main(["backup", "-o", str(tmp_path / inside)]) == 1
    error = capsys.readouterr().err.strip()
    assert error.startswith("esteira backup: ") and "outside the data directory" in error
    assert not (settings.data_dir / "backups").exists()
