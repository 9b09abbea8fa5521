"""`esteira backup`: both SQLite stores through the online backup API, then the files."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO
from urllib.parse import quote

from sqlalchemy.exc import SQLAlchemyError
from sqlmodel import select

from activities.signer.models.jobs import SigningProfile
from services.backup.archive import ArchiveWriter, Manifest, archive_writer
from services.backup.layout import (
    DATA,
    EXTERNAL,
    PAYLOAD_KEYS,
    STORE,
    TEMPORAL,
    Layout,
    layout_of,
)
from shared.db.engine import create_engine, session_factory
from shared.private_files import make_sqlite_private
from shared.settings import Settings
from shared.version import full_version

PG_DUMP_HINT = "pg_dump --format=custom (docs/deployment.md, Backup and restore)"


class BackupError(RuntimeError):
    """The backup could not be completed; nothing usable was written."""


def write_backup(settings: Settings, out: IO[bytes], *, compress: bool) -> Manifest:
    """Write the whole backup of this host to `out` and return its manifest."""
    layout = layout_of(settings)
    manifest = Manifest(created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                        esteira_version=full_version(), data_dir=str(layout.data_dir),
                        store=layout.store_kind, temporal=layout.temporal_kind,
                        not_included=_configured_elsewhere(settings, layout))
    with archive_writer(out, compress=compress) as writer:
        archived = _snapshots(layout, writer, manifest.not_included)
        if layout.payload_key_file.is_file():
            archived |= _add_file(writer, f"{PAYLOAD_KEYS}/{layout.payload_key_file.name}",
                                  layout.payload_key_file)
        for prefix, root in layout.roots():
            for path in _walk(layout, root, archived):
                archived |= _add_file(writer, f"{prefix}/{path.relative_to(root).as_posix()}",
                                      path)
        _profile_files(settings, layout, writer, archived, manifest.not_included)
        writer.finish(manifest)
    return manifest


def _snapshots(layout: Layout, writer: ArchiveWriter, notes: list[str]) -> set[Path]:
    """Temporal's database first, then the store, so the store is never older than Temporal:
    a workflow then at worst repeats an activity whose (idempotent) write the store has,
    instead of having skipped one the store lacks."""
    done: set[Path] = set()
    with tempfile.TemporaryDirectory(prefix="esteira-backup-") as scratch:
        for name, database in ((TEMPORAL, layout.temporal), (STORE, layout.store)):
            if database is None:
                continue
            if not database.is_file():
                notes.append(f"{name}: no database at {database} yet")
                continue
            copy = Path(scratch) / Path(name).name
            _online_backup(database, copy)
            with copy.open("rb") as handle:
                writer.add(name, handle, 0o600)
            done.add(database)
    return done


def _online_backup(source: Path, target: Path) -> None:
    """SQLite's online backup API: a consistent copy while other processes keep writing."""
    make_sqlite_private(target)
    # mode=rw: never create the source; timeout: wait out a writer's lock.
    src = sqlite3.connect(f"file:{quote(str(source))}?mode=rw", uri=True, timeout=30)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
        verdict = dst.execute("PRAGMA quick_check").fetchone()[0]
    except sqlite3.Error as exc:
        raise BackupError(f"could not copy {source}: {exc}") from None
    finally:
        dst.close()
        src.close()
    if verdict != "ok":
        raise BackupError(f"{source} fails SQLite's quick_check ({verdict}): not archived")


def _walk(layout: Layout, root: Path, exclude: set[Path]) -> Iterator[Path]:
    """Regular files under `root`, in name order, without the parts walked elsewhere."""
    other_roots = {path for _, path in layout.roots()} - {root}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if (here / d) not in other_roots
                         and not layout.skipped(here / d))
        for name in sorted(files):
            path = here / name
            if path in exclude or layout.skipped(path):
                continue
            try:
                if stat.S_ISREG(path.lstat().st_mode):
                    yield path
            except FileNotFoundError:
                continue  # moved on (a job finishing): the store says where it went


def _add_file(writer: ArchiveWriter, name: str, path: Path) -> set[Path]:
    try:
        with path.open("rb") as handle:
            writer.add(name, handle, os.fstat(handle.fileno()).st_mode)
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise BackupError(f"could not read {path}: {exc.strerror or exc}") from None
    return {path}


def _profile_files(settings: Settings, layout: Layout, writer: ArchiveWriter,
                   archived: set[Path], notes: list[str]) -> None:
    """Certificates, password files, trust roots and policy documents the signing profiles
    name outside the folders already archived, as `external/<absolute path>`."""
    if layout.store is not None and not layout.store.is_file():
        return
    try:
        named = asyncio.run(_named_by_profiles(settings.sqlalchemy_url))
    except (SQLAlchemyError, OSError) as exc:
        notes.append("files named by signing profiles outside the data directory: the store "
                     f"could not be read ({type(exc).__name__})")
        return
    for path in sorted(named - archived):
        if path.is_file() and not layout.skipped(path):
            archived |= _add_file(writer, f"{EXTERNAL}{path.as_posix()}", path)


async def _named_by_profiles(url: str) -> set[Path]:
    engine = create_engine(url)
    try:
        async with session_factory(engine)() as session:
            rows = (await session.exec(select(
                SigningProfile.pfx_path, SigningProfile.pfx_password_file,
                SigningProfile.trust_roots, SigningProfile.policy_document))).all()
    finally:
        await engine.dispose()
    found: set[Path] = set()
    for pfx, password, roots, policy in rows:
        for value in (pfx, password, policy, *(roots or [])):
            if value:
                found.add(Path(value).resolve())
    return found


def _configured_elsewhere(settings: Settings, layout: Layout) -> list[str]:
    """What a restore also needs that this archive does not hold, said out loud."""
    notes = []
    if layout.store is None:
        notes.append(f"the operational store, {layout.store_label}: back it up with "
                     f"{PG_DUMP_HINT}")
    if layout.temporal is None:
        notes.append(f"Temporal's state, on {layout.temporal_label}: back up its databases "
                     f"with the cluster's own tooling ({PG_DUMP_HINT} for PostgreSQL)")
    codec = settings.payload_codec
    if codec.enabled and codec.keys is not None and codec.keys.get_secret_value().strip():
        notes.append("the payload codec keys (ESTEIRA_PAYLOAD_CODEC__KEYS): keep them with your "
                     "secrets; without them no Temporal history can be read")
    if settings.signing.encryption_passphrase is not None:
        notes.append("the BSENC passphrase (ESTEIRA_SIGNING__ENCRYPTION_PASSPHRASE): keep it "
                     f"with your secrets; the salt is in {DATA}/keys/")
    notes.append("the configuration (environment, config file, /etc/esteira/esteira.env on "
                 "systemd)")
    return notes
