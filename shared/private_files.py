"""Files only their owner may read (keys, generated secrets), private from the first byte."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` with mode 0600, set before any byte is written."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        # O_CREAT's mode only applies to a new file: an existing one may be wider.
        os.fchmod(handle.fileno(), 0o600)
        handle.write(data)


# SQLite's own side files: it creates each with the mode of the database file (os_unix.c,
# findCreateFileMode), so a private database keeps them private too.
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def make_sqlite_private(database: Path, *, create: bool = True) -> None:
    """Narrow `database` and its side files to 0600; first create it empty if asked.

    An empty file is a valid empty SQLite database, so creating it first fixes the mode of
    everything SQLite makes beside it. Stores hold CPFs and amounts: owner only.
    """
    database.parent.mkdir(parents=True, exist_ok=True)
    # Best effort: a path SQLite can't open (a directory, no permission) is reported by
    # SQLite at the first connection, where the store's own errors are handled.
    if create:
        with contextlib.suppress(OSError):
            os.close(os.open(database, os.O_WRONLY | os.O_CREAT, 0o600))
    for path in (database, *(Path(f"{database}{suffix}") for suffix in SQLITE_SIDE_FILES)):
        if path.is_file():
            with contextlib.suppress(OSError):
                os.chmod(path, 0o600)
