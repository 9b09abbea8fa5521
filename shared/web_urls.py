"""URLs we call out to must be web URLs: http or https with a host, nothing else."""

from __future__ import annotations

from urllib.parse import urlsplit

WEB_SCHEMES = frozenset({"http", "https"})


def web_url(value: str | None) -> str | None:
    """`value` if it is an http(s) URL with a host; ValueError otherwise (file://, ftp://…)."""
    if value is None:
        return None
    parts = urlsplit(value.strip())
    if parts.scheme.lower() not in WEB_SCHEMES or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL with a host")
    return value.strip()
