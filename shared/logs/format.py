"""The seed's log line: timestamp with 7 fractional digits, level, message, properties."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

LEVEL_CODES = {
    logging.DEBUG: "DBG",
    logging.INFO: "INF",
    logging.WARNING: "WRN",
    logging.ERROR: "ERR",
    logging.CRITICAL: "FTL",
}


def props(**properties: object) -> dict[str, dict[str, object]]:
    """Structured properties for a log call: `log.info("...", extra=props(JobId=id))`."""
    return {"props": properties}


def format_timestamp(created: float) -> str:
    """`2026-05-26T15:42:11.1234567+00:00` (Serilog's round-trip format)."""
    moment = datetime.fromtimestamp(created, UTC)
    ticks = round((created % 1) * 10_000_000) % 10_000_000
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{ticks:07d}+00:00"


def format_properties(properties: dict[str, object]) -> str:
    """`{JobId: "9b62…", Format: "Pades"}`."""
    parts = [f"{key}: {json.dumps(value, ensure_ascii=False, default=str)}"
             for key, value in properties.items()]
    return "{" + ", ".join(parts) + "}"


class SeedLineFormatter(logging.Formatter):
    """Formats one record as one plain-text line (exception text follows, indented)."""

    def __init__(self, masker: Any = None, static_props: dict[str, object] | None = None) -> None:
        super().__init__()
        self._masker = masker
        self._static = static_props or {}

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        properties = {**self._static, "SourceContext": record.name,
                      **getattr(record, "props", {})}
        line = (f"{format_timestamp(record.created)} "
                f"[{LEVEL_CODES.get(record.levelno, 'INF')}] {message}  "
                f"{format_properties(properties)}")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return self._masker.mask(line) if self._masker else line
