"""The httpx client of a worker that calls systems we don't own, sending through aiohttp."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import aiohttp
import httpx
from httpx_aiohttp import AiohttpTransport

# Why aiohttp underneath: httpcore's pool looks at every kept connection before each call, and
# its parser is pure Python; aiohttp's pool doesn't and its parser is C (bench/http_client.py,
# bench/sisbajud_webhook.py: a quarter less of the SISBAJUD worker's CPU per order).
# aiohttp reuses a kept connection without looking at it first (httpcore did): an idle one is
# given up before a server's usual 5 s (uvicorn's, Go's keep-alive), never reused as it closes.
KEEPALIVE_SECONDS = 4.0


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    """aiohttp's errors the transport leaves unmapped (a malformed answer, for one) as
    httpx's, so callers catching `httpx.HTTPError` see every failure."""
    try:
        yield
    except aiohttp.ClientError as exc:
        raise httpx.TransportError(f"{type(exc).__name__}: {exc}") from exc


class _Body(httpx.AsyncByteStream):
    """The answer's body, read with the same mapping of errors."""

    def __init__(self, stream: httpx.AsyncByteStream) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for chunk in self._stream:
                yield chunk

    async def aclose(self) -> None:
        with _as_httpx_errors():
            await self._stream.aclose()


class _Transport(AiohttpTransport):
    """httpx-aiohttp's transport; no aiohttp error escapes it."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        with _as_httpx_errors():
            response = await super().handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _Body(response.stream)
        return response


def pooled_client(*, timeout: float, connections: int,
                  keepalive: float = KEEPALIVE_SECONDS) -> httpx.AsyncClient:
    """An httpx client keeping up to `connections` connections open, `keepalive` seconds
    idle at most, between calls."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections,
                          keepalive_expiry=keepalive)
    return httpx.AsyncClient(timeout=timeout, transport=_Transport(limits=limits))
