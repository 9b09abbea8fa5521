"""The HTTP access log: one line per request, its target's tokens masked."""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shared.http_redaction import TargetRedactor
from shared.logs.format import props

log = logging.getLogger("esteira.access")


class AccessLog:
    """Logs method, masked target, status, duration and client of every HTTP request."""

    def __init__(self, app: ASGIApp, service: str) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: list[int] = []

        async def noting_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, noting_send)
        finally:
            # An exception that escapes becomes Starlette's 500 after it passes us.
            self._write(scope, status[0] if status else 500,
                        (time.perf_counter() - started) * 1000)

    def _write(self, scope: Scope, status: int, elapsed_ms: float) -> None:
        # After routing: the route's parameters say which path segments are secrets.
        target = TargetRedactor(scope.get("app")).target(scope)
        client = scope.get("client")
        address = client[0] if client else "-"
        log.info("HTTP %s %s responded %d in %.1f ms", scope["method"], target, status,
                 elapsed_ms, extra=props(
                     Service=self.service, RequestMethod=scope["method"], RequestPath=target,
                     StatusCode=status, ElapsedMs=round(elapsed_ms, 1), Client=address))
