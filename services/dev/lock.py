"""The data directory's lock: one `esteira dev` (or one restore) on a data directory at a time."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import TextIO

LOCK_FILE = Path("run") / "esteira-dev.lock"


class DataDirBusyError(RuntimeError):
    """Another process holds the data directory's lock; `holder` is what it wrote there."""

    def __init__(self, data_dir: Path, holder: str) -> None:
        super().__init__(f"{holder} holds {data_dir}")
        self.data_dir = data_dir
        self.holder = holder


def lock_data_dir(data_dir: Path, *, holder: str) -> TextIO:
    """Take the lock (non-blocking) and write `pid <n>: <holder>` in it; close to release."""
    lock_path = data_dir / LOCK_FILE
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    handle = lock_path.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        owner = handle.read().strip() or "another process"
        handle.close()
        raise DataDirBusyError(data_dir, owner) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}: {holder}")
    handle.flush()
    return handle
