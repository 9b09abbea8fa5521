"""Which file names are never candidates: producers' temporary files and configured patterns."""

from __future__ import annotations

import fnmatch

# Producers' temporary files and our own scratch files are never candidates.
DEFAULT_IGNORES = (".*", "*.tmp", "*.part", "*.partial", "*.crdownload", "~$*", "*.swp")


def ignored(name: str, patterns: list[str]) -> bool:
    """True when a file name matches the default or the folder's ignore patterns."""
    return any(fnmatch.fnmatch(name.lower(), p.lower()) for p in (*DEFAULT_IGNORES, *patterns))
