"""Daily log files `esteira-yyyyMMdd.log`, rolled again at a size limit, N files kept."""

from __future__ import annotations

import logging
import os
import re
import threading
from datetime import UTC, datetime
from pathlib import Path

_NAME = re.compile(r"^(?P<prefix>.+)-(?P<day>\d{8})(?:_(?P<seq>\d{3}))?\.log$")


class DailySizeRotatingFile:
    """Appends lines to `<prefix>-yyyyMMdd[_NNN].log`; one writer per process, line-atomic."""

    def __init__(self, directory: Path, *, prefix: str = "esteira",
                 size_limit_bytes: int = 50 * 1024 * 1024, retained: int = 14) -> None:
        self.directory = directory
        self.prefix = prefix
        self.size_limit = size_limit_bytes
        self.retained = retained
        self._lock = threading.Lock()
        self._day = ""
        self._seq = 0
        self._fd: int | None = None
        directory.mkdir(parents=True, exist_ok=True)

    def write_line(self, line: str) -> None:
        """Write one line (newline added), rolling over first if the day or size says so."""
        data = (line.rstrip("\n") + "\n").encode("utf-8", "replace")
        with self._lock:
            fd = self._current_fd(len(data))
            os.write(fd, data)

    def close(self) -> None:
        """Close the current file."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def path_for(self, day: str, seq: int) -> Path:
        """The file name for a day and its roll sequence."""
        suffix = f"_{seq:03d}" if seq else ""
        return self.directory / f"{self.prefix}-{day}{suffix}.log"

    def _current_fd(self, incoming: int) -> int:
        day = datetime.now(UTC).strftime("%Y%m%d")
        if day != self._day:
            self._open(day, self._last_seq(day))
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size and size + incoming > self.size_limit:
            self._open(day, self._seq + 1)
        assert self._fd is not None
        return self._fd

    def _open(self, day: str, seq: int) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._day, self._seq = day, seq
        # O_APPEND keeps lines whole even if another process appends to the same file.
        self._fd = os.open(self.path_for(day, seq), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o640)
        self._prune()

    def _last_seq(self, day: str) -> int:
        seqs = [int(m["seq"] or 0) for m in self._own_files() if m["day"] == day]
        return max(seqs, default=0)

    def _own_files(self) -> list[re.Match[str]]:
        matches = (_NAME.match(p.name) for p in self.directory.iterdir())
        return [m for m in matches if m and m["prefix"] == self.prefix]

    def _prune(self) -> None:
        files = sorted(self._own_files(), key=lambda m: (m["day"], int(m["seq"] or 0)))
        for match in files[: max(0, len(files) - self.retained)]:
            (self.directory / match.string).unlink(missing_ok=True)


class DailyFileHandler(logging.Handler):
    """A logging handler over `DailySizeRotatingFile`."""

    def __init__(self, target: DailySizeRotatingFile) -> None:
        super().__init__()
        self.target = target

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.target.write_line(self.format(record))
        except Exception:
            self.handleError(record)

    def close(self) -> None:
        self.target.close()
        super().close()
