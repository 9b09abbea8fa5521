"""Durations as the seeds write them: `30s`, `1h30m`, `250ms`, or plain seconds."""

from __future__ import annotations

import re

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_DURATION_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def seconds_of(text: str) -> float:
    """`30s` -> 30.0, `1h30m` -> 5400.0, `45` -> 45.0 (ValueError for anything else)."""
    text = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    if not text or _DURATION_PART.sub("", text):
        raise ValueError(f"not a duration: {text!r}")
    return sum(float(n) * _DURATION_UNIT[unit] for n, unit in _DURATION_PART.findall(text))
