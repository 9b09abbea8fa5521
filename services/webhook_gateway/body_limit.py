"""Read a request body while it streams in, refusing it as soon as it passes a limit."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import aclosing
from typing import Any

from starlette.requests import ClientDisconnect, Request

MAX_WEBHOOK_BODY = 1024 * 1024  # the seed's 1 MiB: larger deliveries get 413

Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]


class BodyTooLarge(Exception):
    """The body (declared or streamed) is larger than `limit` bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body exceeds {limit} bytes")
        self.limit = limit


async def read_limited(chunks: AsyncIterator[bytes], limit: int = MAX_WEBHOOK_BODY) -> bytes:
    """Join chunks, holding at most `limit + 1` bytes; stop pulling once past the limit."""
    buffer = bytearray()
    async for chunk in chunks:
        room = limit + 1 - len(buffer)
        buffer += memoryview(chunk)[:room]  # no temporary copy of an oversized chunk
        if len(buffer) > limit:
            raise BodyTooLarge(limit)
    return bytes(buffer)


async def _asgi_chunks(receive: Receive) -> AsyncGenerator[bytes, None]:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        yield message.get("body", b"")
        if not message.get("more_body", False):
            return


async def read_asgi_body(
    scope: MutableMapping[str, Any], receive: Receive, limit: int = MAX_WEBHOOK_BODY
) -> bytes:
    """ASGI level: refuse on `Content-Length` first, then count what actually arrives."""
    for name, value in scope.get("headers", []):
        if name.lower() == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                break
            if declared > limit:
                raise BodyTooLarge(limit)
    async with aclosing(_asgi_chunks(receive)) as chunks:
        return await read_limited(chunks, limit)


async def read_request_body(request: Request, limit: int = MAX_WEBHOOK_BODY) -> bytes:
    """Starlette/FastAPI convenience over `read_asgi_body` (do not call `request.body()`)."""
    return await read_asgi_body(request.scope, request.receive, limit)
