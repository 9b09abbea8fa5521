"""Streaming body limit: 1 MiB is accepted, 1 MiB + 1 byte is refused without reading on."""

from __future__ import annotations

import tracemalloc

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from services.webhook_gateway.body_limit import (
    MAX_WEBHOOK_BODY,
    BodyTooLarge,
    read_asgi_body,
    read_request_body,
)

MIB = 1024 * 1024
CHUNK = 64 * 1024


def _app() -> FastAPI:
    app = FastAPI()

    @app.post("/hook")
    async def hook(request: Request) -> JSONResponse:
        try:
            body = await read_request_body(request)
        except BodyTooLarge:
            return JSONResponse({"error": "too large"}, status_code=413)
        return JSONResponse({"size": len(body)})

    return app


async def _post(content) -> httpx.Response:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=_app()), base_url="http://gw"
    ) as http:
        return await http.post("/hook", content=content)


async def _stream(size: int):
    sent = 0
    while sent < size:
        n = min(CHUNK, size - sent)
        sent += n
        yield b"x" * n


def test_default_limit_is_one_mebibyte():
    assert MAX_WEBHOOK_BODY == MIB


@pytest.mark.asyncio
async def test_exactly_one_mebibyte_is_accepted():
    response = await _post(b"x" * MIB)
    assert response.status_code == 200 and response.json()["size"] == MIB


@pytest.mark.asyncio
async def test_one_mebibyte_plus_one_byte_is_refused():
    assert (await _post(b"x" * (MIB + 1))).status_code == 413


@pytest.mark.asyncio
async def test_chunked_bodies_without_content_length_are_counted():
    accepted = await _post(_stream(MIB))
    refused = await _post(_stream(MIB + 1))
    assert accepted.status_code == 200 and accepted.json()["size"] == MIB
    assert refused.status_code == 413


class _Receiver:
    """An ASGI `receive` that counts how many chunks were pulled."""

    def __init__(self, total: int) -> None:
        self.left = total
        self.pulls = 0

    async def __call__(self) -> dict:
        self.pulls += 1
        n = min(CHUNK, self.left)
        self.left -= n
        return {"type": "http.request", "body": b"x" * n, "more_body": self.left > 0}


@pytest.mark.asyncio
async def test_reading_stops_at_the_first_chunk_past_the_limit():
    receive = _Receiver(8 * MIB)
    with pytest.raises(BodyTooLarge):
        await read_asgi_body({"type": "http", "headers": []}, receive)
    assert receive.pulls == MIB // CHUNK + 1


@pytest.mark.asyncio
async def test_an_oversized_single_chunk_is_not_copied_whole():
    huge = b"x" * (8 * MIB)

    async def receive() -> dict:
        return {"type": "http.request", "body": huge, "more_body": False}

    tracemalloc.start()
    try:
        with pytest.raises(BodyTooLarge):
            await read_asgi_body({"type": "http", "headers": []}, receive)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Holding limit + 1 bytes costs about 1 MiB; keeping the whole chunk would cost 8 MiB.
    assert peak < 3 * MIB


@pytest.mark.asyncio
async def test_a_declared_content_length_over_the_limit_is_refused_before_reading():
    receive = _Receiver(MIB + 1)
    scope = {"type": "http", "headers": [(b"content-length", str(MIB + 1).encode())]}
    with pytest.raises(BodyTooLarge):
        await read_asgi_body(scope, receive)
    assert receive.pulls == 0


@pytest.mark.asyncio
async def test_a_custom_limit_applies():
    receive = _Receiver(11)
    with pytest.raises(BodyTooLarge) as refused:
        await read_asgi_body({"type": "http", "headers": []}, receive, limit=10)
    assert refused.value.limit == 10
