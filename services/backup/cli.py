"""The `esteira backup` and `esteira restore` commands: arguments, files, one-line refusals."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from services.backup.archive import CorruptArchiveError, Entry, Manifest
from services.backup.create import BackupError, write_backup
from services.backup.layout import layout_of
from services.backup.restore import RestoreRefusedError, restore
from shared.settings import Settings

STDIO = "-"


def _backup(settings: Settings, args: argparse.Namespace) -> int:
    try:
        if args.output == STDIO:
            manifest = write_backup(settings, sys.stdout.buffer, compress=True)
            where = "standard output"
        else:
            target = output_path(args.output)
            if layout_of(settings).walks(target.resolve()):
                raise BackupError(f"{target} is inside what a backup archives; write the "
                                  "archive outside the data directory and the storage tree")
            target.parent.mkdir(parents=True, exist_ok=True)
            with _private_output(target) as out:
                manifest = write_backup(settings, out, compress=target.name.endswith(".gz"))
            where = str(target)
    except (BackupError, OSError) as exc:
        print(f"esteira backup: {exc}", file=sys.stderr)
        return 1
    # The report goes to stderr when the archive itself goes to stdout.
    report = sys.stderr if args.output == STDIO else sys.stdout
    print(backup_report(manifest, where), file=report)
    return 0


def _restore(settings: Settings, args: argparse.Namespace) -> int:
    name = "standard input" if args.archive == STDIO else args.archive
    try:
        with _input(args.archive) as source:
            done = restore(settings, source, force=args.force)
    except CorruptArchiveError as exc:
        print(f"esteira restore: {name}: corrupt or mismatching archive: {exc}",
              file=sys.stderr)
        return 1
    except RestoreRefusedError as exc:
        print(f"esteira restore: refused: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"esteira restore: {exc}", file=sys.stderr)
        return 1
    print(f"Restored {len(done.targets)} files from {name} (made {done.manifest.created_at} "
          f"by esteira {done.manifest.esteira_version}) into {settings.data_dir.resolve()}.")
    print(_not_included(done.manifest, "Not in the archive (restore it yourself)"))
    print("Start Esteira again: `systemctl start esteira`, or `esteira dev`.")
    return 0


def output_path(requested: str | None) -> Path:
    """The archive's path: as given, or a timestamped name in the given (or current) folder."""
    name = f"esteira-backup-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.tar.gz"
    if requested is None:
        return Path(name)
    path = Path(requested)
    return path / name if requested.endswith("/") or path.is_dir() else path


def backup_report(manifest: Manifest, where: str) -> str:
    """What the archive holds, by part, and what it deliberately does not."""
    total = sum(entry.size for entry in manifest.files)
    lines = [f"Backed up to {where}: {len(manifest.files)} files, {_size(total)}."]
    groups: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    for entry in manifest.files:
        groups[_group(entry)] += 1
        sizes[_group(entry)] += entry.size
    lines += [f"  {group}: {count} file(s), {_size(sizes[group])}"
              for group, count in groups.items()]
    return "\n".join([*lines, _not_included(manifest, "Not in this archive")])


def _not_included(manifest: Manifest, title: str) -> str:
    return "\n".join([f"{title}:", *(f"  - {note}" for note in manifest.not_included)])


def _group(entry: Entry) -> str:
    first = entry.name.split("/", 1)[0]
    # The stores and key files by name, the trees by their top folder.
    return entry.name if first in {"store", "temporal", "payload-keys"} else f"{first}/"


def _size(count: int) -> str:
    if count < 1024:
        return f"{count} bytes"
    scaled = float(count)
    for unit in ("KiB", "MiB", "GiB"):
        scaled /= 1024
        if scaled < 1024 or unit == "GiB":
            break
    return f"{scaled:.1f} {unit}"


@contextlib.contextmanager
def _private_output(target: Path) -> Iterator[IO[bytes]]:
    """A new 0600 file beside `target`, renamed onto it only once complete."""
    partial = target.with_name(f".{target.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def _input(archive: str) -> Iterator[IO[bytes]]:
    if archive == STDIO:
        yield sys.stdin.buffer
        return
    with Path(archive).open("rb") as source:
        yield source


def add_arguments(name: str, sub: argparse.ArgumentParser) -> None:
    """Arguments of this module's commands."""
    if name == "backup":
        sub.add_argument("-o", "--output",
                         help="archive file or folder (default: esteira-backup-<UTC time>"
                              ".tar.gz here; `-` writes the archive to standard output)")
    elif name == "restore":
        sub.add_argument("archive", help="an `esteira backup` archive (`-`: standard input)")
        sub.add_argument("--force", action="store_true",
                         help="replace files that already exist (Esteira must be stopped)")


COMMANDS: dict[str, tuple[str, Callable[[Settings, argparse.Namespace], int]]] = {
    "backup": ("archive both SQLite stores (online, while running), keys, PKI, profile files "
               "and storage with a checksummed manifest", _backup),
    "restore": ("restore an `esteira backup` archive onto a stopped host, checking every "
                "checksum first", _restore),
}
