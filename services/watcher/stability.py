"""The stability detector: a file is a candidate once it stopped changing."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass
class _Seen:
    size: int
    mtime_ns: int
    since: float


class StabilityTracker:
    """A file is ready once its size and mtime stayed the same for the whole window."""

    def __init__(self, window_seconds: float) -> None:
        self.window = window_seconds
        self._seen: dict[Path, _Seen] = {}

    def offer(self, path: Path, now: float) -> None:
        """Consider a path (an event or an enumeration found it)."""
        self._observe(path, now)

    def ready(self, now: float) -> list[Path]:
        """Paths stable for the window; they leave the tracker."""
        done = []
        for path in list(self._seen):
            if not self._observe(path, now):
                continue
            seen = self._seen[path]
            if now - seen.since >= self.window:
                done.append(path)
                del self._seen[path]
        return done

    def pending(self) -> int:
        """How many paths are still settling."""
        return len(self._seen)

    def _observe(self, path: Path, now: float) -> bool:
        try:
            stat = os.stat(path)
        except OSError:
            self._seen.pop(path, None)
            return False
        seen = self._seen.get(path)
        if seen is None or (seen.size, seen.mtime_ns) != (stat.st_size, stat.st_mtime_ns):
            self._seen[path] = _Seen(stat.st_size, stat.st_mtime_ns, now)
        return True
