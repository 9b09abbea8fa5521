"""The "Service ready" banner printed after bootstrap, in the seed's shape."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from services.dashboard.accounts import banner_note
from shared.db.engine import describe_store
from shared.settings import Settings, unknown_environment_keys
from shared.temporal_ui import temporal_ui_url
from shared.version import full_version

WIDTH = 80


def host_mode() -> str:
    """How this process is hosted: systemd, kubernetes, docker or console."""
    if os.environ.get("NOTIFY_SOCKET") or os.environ.get("INVOCATION_ID"):
        return "systemd"
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    if Path("/.dockerenv").exists():
        return "docker"
    return "console"


def render(title: str, rows: Sequence[tuple[str, str]]) -> str:
    """`==== title ====`, `key = value` rows aligned, a closing rule."""
    heading = f" {title} "
    left = (WIDTH - len(heading)) // 2
    lines = ["=" * left + heading + "=" * (WIDTH - left - len(heading))]
    width = max((len(key) for key, _ in rows), default=0)
    lines += [f"{key.ljust(width)} = {value}" for key, value in rows]
    lines.append("=" * WIDTH)
    return "\n".join(lines)


def ready_rows(settings: Settings, *, pipeline: str, api_key_note: str,
               extra: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """The rows of the readiness banner; domains add theirs through `extra`."""
    rows = [
        ("host mode", host_mode()),
        ("environment", settings.environment),
        ("content root", str(Path.cwd())),
        ("storage root", str(settings.storage_root)),
        ("operational store", describe_store(settings.sqlalchemy_url)),
        ("poll interval", f"{settings.pipeline.poll_interval_seconds:g}s"),
        ("pipeline", pipeline),
        ("max concurrency", str(settings.pipeline.max_concurrency)),
        ("upload", "enabled" if settings.upload.enabled else "disabled"),
        *extra,
        ("version", full_version()),
        ("temporal", f"{settings.temporal_address} (namespace {settings.temporal.namespace})"),
        ("temporal ui", temporal_ui_url(settings)),
        ("rest api", f"http://{settings.host}:{settings.ports.api}/api"),
        ("dashboard", banner_note(settings)),
        ("grpc", f"{settings.host}:{settings.ports.grpc}"),
        ("api key", api_key_note),
        ("logs", str(settings.log_dir / "esteira-yyyyMMdd.log")),
    ]
    unknown = unknown_environment_keys()
    if unknown:
        rows.append(("unknown settings", ", ".join(unknown) + " (ignored: check the spelling)"))
    return rows

