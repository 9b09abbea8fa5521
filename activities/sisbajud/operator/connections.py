"""The connection check as the doors show it: the preflight's list and the banner's lines."""

from __future__ import annotations

import httpx

from activities.sisbajud.connections import Connection, check_connections
from shared.settings import Settings

# The banner waits this long per endpoint: a slow one must not hold up `esteira dev`.
BANNER_TIMEOUT_SECONDS = 5.0


class Connections:
    """Each configured endpoint called once now, on a client of its own (a fresh connection
    is what the check is about)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    async def report(self) -> list[Connection]:
        """`target`, `url`, `ok`, `detail` per endpoint (the preflight's)."""
        return await self._check(self._settings.sisbajud.http_timeout_seconds)

    async def rows(self) -> list[tuple[str, str]]:
        """`(sisbajud <target>, ok <url> | FAILED <url>: <why>)` per endpoint (the banner's)."""
        return [(f"sisbajud {c.target}", c.line())
                for c in await self._check(BANNER_TIMEOUT_SECONDS)]

    async def _check(self, timeout: float) -> list[Connection]:
        async with httpx.AsyncClient(timeout=timeout) as http:
            return await check_connections(http, self._settings)
