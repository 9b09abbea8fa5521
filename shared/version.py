"""The running build: short version and the full one with build metadata."""

from __future__ import annotations

import os
import subprocess
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


def short_version() -> str:
    """`0.1.0`."""
    try:
        return version("esteira")
    except PackageNotFoundError:
        return "0.0.0"


@cache
def full_version() -> str:
    """`0.1.0+9a3f2c1e4b…`: `ESTEIRA_BUILD`, else the checkout's commit, else `+local`."""
    build = os.environ.get("ESTEIRA_BUILD") or _git_commit() or "local"
    return f"{short_version()}+{build}"


def _git_commit() -> str | None:
    try:
        result = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=_ROOT, capture_output=True,
            text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() or None if result.returncode == 0 else None
