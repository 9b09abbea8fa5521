"""A small host for the backup tests: a data directory with stores, keys, PKI and storage."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import sqlite3
import tarfile
from pathlib import Path

from services.backup.archive import MANIFEST, Manifest
from services.backup.create import write_backup
from services.backup.restore import Restored, restore
from shared.settings import Settings

# Each file of the host: its path under data/ and its mode.
FILES = {
    "keys/bsenc.salt": 0o600,
    "keys/temporal-payload.keys": 0o600,
    "api-key": 0o600,
    "hub-webhook-secret": 0o600,
    "pki/ca.pem": 0o644,
    "pki/signer.pfx": 0o600,
    "pki/signer.password": 0o600,
    "storage/processing/job-1/contrato.pdf": 0o644,
    "storage/output/signed.pdf": 0o644,
    # Runtime state, logs and the dev mail sink: never in an archive.
    "run/esteira-dev.lock": 0o644,
    "logs/esteira-20300110.log": 0o640,
    "mail/approval-1.eml": 0o644,
}
RUNTIME = ("run/", "logs/", "mail/")


def make_host(root: Path, **settings: object) -> Settings:
    """Settings on `root/data`, with every file of FILES and both SQLite stores written."""
    data = root / "data"
    for name, mode in FILES.items():
        path = data / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"{name}\n".encode() * 3)
        path.chmod(mode)
    for database in (data / "db" / "esteira.db", data / "temporal" / "temporal.db"):
        fill_sqlite(database, rows=10)
    return Settings(data_dir=data, **settings)  # type: ignore[arg-type]


def fill_sqlite(database: Path, *, rows: int) -> None:
    """A WAL database with a table `t` of `rows` rows."""
    database.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(database)) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
        connection.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(rows)])
        connection.commit()
    database.chmod(0o600)


def count_rows(database: Path) -> int:
    """Rows of `t` in a database file."""
    with contextlib.closing(sqlite3.connect(database)) as connection:
        return connection.execute("SELECT count(*) FROM t").fetchone()[0]


def backup_to(settings: Settings, archive: Path, *, compress: bool = False) -> Manifest:
    """`esteira backup` into `archive` (plain tar unless asked, so tests can edit bytes)."""
    with archive.open("wb") as out:
        return write_backup(settings, out, compress=compress)


def restore_from(settings: Settings, archive: Path, *, force: bool = False) -> Restored:
    """`esteira restore` from `archive`."""
    with archive.open("rb") as source:
        return restore(settings, source, force=force)


def members(archive: Path) -> dict[str, bytes]:
    """Every member of an archive by name, with its bytes."""
    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isreg()}  # type: ignore[union-attr]


def manifest_of(archive: Path) -> Manifest:
    """The archive's manifest."""
    return Manifest.parse(members(archive)[MANIFEST])


def rewrite(archive: Path, target: Path, change) -> None:
    """A copy of `archive` with `change(name, data) -> (name, data) | None` applied to each
    member (None drops it), written as a plain tar."""
    with tarfile.open(archive) as source, tarfile.open(target, "w") as out:
        for member in source:
            data = source.extractfile(member).read()  # type: ignore[union-attr]
            changed = change(member.name, data)
            if changed is None:
                continue
            member.name, data = changed
            member.size = len(data)
            out.addfile(member, io.BytesIO(data))


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mode(path: Path) -> int:
    """A file's permission bits."""
    return os.stat(path).st_mode & 0o777
