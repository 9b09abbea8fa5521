"""The JSON log line: one object per line for log shippers, masked field by field."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from shared.logs.format import format_timestamp
from shared.logs.masking import MASK, SecretMasker, is_secret_key

# The line's own fields: a bound key of the same name is kept under `props.<name>`.
RESERVED = frozenset({"time", "level", "logger", "message", "exception", "stack",
                      "trace_id", "span_id"})
# What the Temporal SDK's workflow and activity loggers attach to their records.
_TEMPORAL_EXTRAS = ("temporal_workflow", "temporal_activity")


class JsonLineFormatter(logging.Formatter):
    """Formats one record as one JSON object: time, level, logger, message, bound keys."""

    def __init__(self, masker: SecretMasker | None = None,
                 static_props: dict[str, object] | None = None) -> None:
        super().__init__()
        self._masker = masker
        self._static = static_props or {}

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": format_timestamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": self._text(record.getMessage()),
        }
        bound = {**self._static, **getattr(record, "props", {})}
        for extra in _TEMPORAL_EXTRAS:
            if isinstance(value := getattr(record, extra, None), dict):
                bound[extra] = value
        for key, value in bound.items():
            name = f"props.{key}" if key in RESERVED else key
            line[name] = MASK if is_secret_key(key) else self._value(value)
        line.update(_trace_ids())
        if record.exc_info:
            line["exception"] = self._text(self.formatException(record.exc_info))
        if record.stack_info:
            line["stack"] = self._text(self.formatStack(record.stack_info))
        # Masked before encoding: a secret is matched as written, not as JSON escapes it.
        return json.dumps(line, ensure_ascii=False, default=str)

    def _text(self, text: str) -> str:
        return self._masker.mask(text) if self._masker else text

    def _value(self, value: object) -> object:
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, dict):
            return {str(k): MASK if is_secret_key(str(k)) else self._value(v)
                    for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._value(v) for v in value]
        if value is None or isinstance(value, bool | int | float):
            return value
        return self._text(str(value))


def _trace_ids() -> dict[str, str]:
    """The active span's ids, so a line can be found from its trace (tracing on only)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:  # never imported: tracing is off, and importing it costs
        return {}
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}
