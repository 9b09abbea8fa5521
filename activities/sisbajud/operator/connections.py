"""The connection check as the doors show it: the preflight's list and the banner's lines."""

from __future__ import annotations

from typing import Any

import httpx

from activities.sisbajud.connections import Connection, check_connections
from shared.settings import Settings


async def _check(settings: Settings, timeout: float) -> list[Connection]:
    async with httpx.AsyncClient(timeout=timeout) as http:
        return await check_connections(http, settings)


async def connection_report(settings: Settings) -> list[dict[str, Any]]:
    """`{target, url, ok, detail}` per endpoint, each called once now (the preflight's)."""
    found = await _check(settings, settings.sisbajud.http_timeout_seconds)
    return [c.to_json() for c in found]


async def connection_rows(settings: Settings) -> list[tuple[str, str]]:
    """`(sisbajud <target>, ok <url> | FAILED <url>: <why>)` per endpoint (the banner's)."""
    return [(f"sisbajud {c.target}", c.line()) for c in await _check(settings, 5.0)]
