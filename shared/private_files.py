"""Files only their owner may read (keys, generated secrets), private from the first byte."""

from __future__ import annotations

import os
from pathlib import Path


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` with mode 0600, set before any byte is written."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        # O_CREAT's mode only applies to a new file: an existing one may be wider.
        os.fchmod(handle.fileno(), 0o600)
        handle.write(data)
