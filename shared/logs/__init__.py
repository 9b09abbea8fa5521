"""Logging for every Esteira process: seed-shaped lines, masked secrets, daily files."""

from __future__ import annotations

import logging
import sys

from shared.logs.files import DailyFileHandler, DailySizeRotatingFile
from shared.logs.format import SeedLineFormatter, props
from shared.logs.json_format import JsonLineFormatter
from shared.logs.masking import SecretMasker, secret_values
from shared.settings import ConfigurationError, Settings

__all__ = ["configure_logging", "line_formatter", "props"]

# Libraries whose INFO chatter drowns the operator's lines.
_QUIET = dict.fromkeys(
    ("httpx", "temporalio", "uvicorn.access", "aiosqlite", "asyncio", "alembic", "watchfiles"),
    logging.WARNING,
)


def configure_logging(settings: Settings, *, process: str, to_file: bool | None = None,
                      extra_secrets: list[str] | None = None) -> SecretMasker:
    """Route the root logger to the console and (optionally) the daily file, both masked."""
    masker = SecretMasker([*secret_values(settings), *_payload_key_secrets(settings),
                           *(extra_secrets or [])])
    formatter = line_formatter(settings, masker, {"Process": process})
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    console = logging.StreamHandler(sys.stderr)
    console.setFormatter(formatter)
    root.addHandler(console)
    if settings.logging.to_file if to_file is None else to_file:
        target = DailySizeRotatingFile(
            settings.log_dir,
            size_limit_bytes=settings.logging.file_size_limit_mb * 1024 * 1024,
            retained=settings.logging.retained_file_count,
        )
        file_handler = DailyFileHandler(target)
        file_handler.setFormatter(formatter)
        root.addHandler(file_handler)
    root.setLevel(settings.logging.level)
    for name, level in _QUIET.items():
        logging.getLogger(name).setLevel(max(level, root.level))
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
    return masker


def line_formatter(settings: Settings, masker: SecretMasker,
                   static_props: dict[str, object]) -> logging.Formatter:
    """The seed's text line, or one JSON object per line (`Logging:Format`)."""
    if settings.logging.format == "json":
        return JsonLineFormatter(masker, static_props)
    return SeedLineFormatter(masker, static_props)


def _payload_key_secrets(settings: Settings) -> list[str]:
    """Each payload key on its own, also when read from the key file (a bad one is reported
    where it is used)."""
    # Imported here: the Temporal module reaches back into this package (masking, through
    # the tracing hooks), which must be importable on its own.
    from shared.temporal import payload_keys

    try:
        keys = payload_keys(settings, generate=False)
    except ConfigurationError:
        return []
    return keys.secrets() if keys else []
