"""`esteira restore`: verify the whole archive, then put each file where this host keeps it."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from services.backup.archive import Entry, Manifest, extract_verified
from services.backup.layout import Layout, UnknownMemberError, is_private, layout_of
from services.dev.lock import LOCK_FILE, DataDirBusyError, lock_data_dir
from shared.private_files import SQLITE_SIDE_FILES
from shared.settings import Settings

PROC = Path("/proc")
PRIVATE_MODE = 0o600
STAGING_PREFIX = "restore-"


class RestoreRefusedError(RuntimeError):
    """The restore would be unsafe or wrong here; nothing was written."""


@dataclass(frozen=True)
class Restored:
    """What a restore put back, and what it reminds the operator of."""

    manifest: Manifest
    targets: list[Path]


def restore(settings: Settings, source: IO[bytes], *, force: bool = False) -> Restored:
    """Restore an archive onto this host's data directory (which nothing may be running on).

    The archive is unpacked and checked in full before a single file is put in place.
    """
    layout = layout_of(settings)
    run_dir = layout.data_dir / LOCK_FILE.parent
    _make_parents(run_dir, _owner_for(run_dir), private=False)
    try:
        lock = lock_data_dir(layout.data_dir, holder="esteira restore")
    except DataDirBusyError as busy:
        raise RestoreRefusedError(
            f"Esteira is running on {layout.data_dir} ({busy.holder}): stop it first "
            "(systemctl stop esteira, or Ctrl+C on `esteira dev`)") from None
    try:
        if (owner := _owner_for(run_dir)) is not None:
            os.chown(layout.data_dir / LOCK_FILE, *owner)
        if users := open_by_others(layout):
            raise RestoreRefusedError(f"{users[0]}: stop every Esteira process on this data "
                                      "directory first")
        # Inside the data directory (its run/ is never archived): on the targets' filesystem,
        # and writable where the rest of the host is not (a read-only container image).
        staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=run_dir))
        try:
            manifest = extract_verified(source, staging)
            moves = _plan(layout, manifest, force=force)
            for entry, target in moves:
                _place(staging / entry.name, target, entry)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    finally:
        lock.close()
    return Restored(manifest, [target for _, target in moves])


def open_by_others(layout: Layout) -> list[str]:
    """Processes (that this user may see) holding a file of this data directory or a store."""
    watched = layout.sqlite_files()
    found = []
    for proc in PROC.iterdir() if PROC.is_dir() else ():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            links = [os.readlink(fd) for fd in (proc / "fd").iterdir()]
        except OSError:
            continue  # gone, or another user's
        for link in links:
            path = Path(link)
            if path in watched or layout.data_dir in path.parents:
                found.append(f"process {proc.name} ({_command(proc)}) has {link} open")
                break
    return found


def _plan(layout: Layout, manifest: Manifest, *, force: bool) -> list[tuple[Entry, Path]]:
    """Each member's target; refuses an archive made for another shape of deployment."""
    if manifest.store != layout.store_kind:
        raise RestoreRefusedError(
            f"the archive's operational store was {manifest.store}, this host's is "
            f"{layout.store_label}: restore with the same ESTEIRA_DATABASE_URL kind")
    if manifest.temporal != layout.temporal_kind:
        raise RestoreRefusedError(
            f"the archive's Temporal was {manifest.temporal}, this host uses "
            f"{layout.temporal_label}: set ESTEIRA_TEMPORAL_SERVER__MODE as it was")
    try:
        moves = [(entry, layout.target(entry.name)) for entry in manifest.files]
    except UnknownMemberError as exc:
        raise RestoreRefusedError(f"the archive does not fit this host: {exc}") from None
    present = [target for _, target in moves if target.exists()]
    if present and not force:
        raise RestoreRefusedError(
            f"{present[0]} already exists ({len(present)} file(s) of the archive do): move "
            "the old data directory aside, or pass --force to replace them")
    return moves


def _place(staged: Path, target: Path, entry: Entry) -> None:
    owner = _owner_for(target)
    private = is_private(entry.name)
    _make_parents(target.parent, owner, private=private)
    # A store's old -wal/-shm beside the restored file would be replayed into it.
    for suffix in SQLITE_SIDE_FILES:
        with contextlib.suppress(FileNotFoundError):
            Path(f"{target}{suffix}").unlink()
    try:
        os.replace(staged, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        shutil.move(staged, target)  # another filesystem (a storage root elsewhere)
    os.chmod(target, PRIVATE_MODE if private else int(entry.mode, 8) & 0o777)
    if owner is not None:
        os.chown(target, *owner)


def _owner_for(target: Path) -> tuple[int, int] | None:
    """Run as root, files take the owner of the nearest existing folder above them (the
    service's user on /var/lib/esteira), so the service can read what root restored."""
    if os.geteuid() != 0:
        return None
    folder = target.parent
    while not folder.exists():
        folder = folder.parent
    info = folder.stat()
    return info.st_uid, info.st_gid


def _make_parents(folder: Path, owner: tuple[int, int] | None, *, private: bool) -> None:
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700 if private else 0o755)
        if owner is not None:
            os.chown(path, *owner)


def _command(proc: Path) -> str:
    try:
        return (proc / "comm").read_text().strip()
    except OSError:
        return "?"
