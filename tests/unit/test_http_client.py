"""The pooled httpx client over aiohttp: answers as httpx's, every failure an httpx error."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import httpx
import pytest

from shared.http_client import KEEPALIVE_SECONDS, pooled_client

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _request(reader: asyncio.StreamReader) -> tuple[bytes, dict[str, str], bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    first, *lines = head.decode().split("\r\n")[:-2]
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    body = await reader.readexactly(int(headers.get("content-length", 0)))
    return first.encode(), headers, body


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[Handler], Awaitable[str]]]:
    servers: list[asyncio.Server] = []

    async def start(handler: Handler) -> str:
        server = await asyncio.start_server(handler, "127.0.0.1", 0)
        servers.append(server)
        return f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"

    yield start
    for server in servers:
        server.close()


def _replying(reply: bytes) -> Handler:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        writer.write(reply)
        await writer.drain()
        writer.close()
    return handle


async def test_a_request_and_its_answer_pass_through_whole(serve):
    seen = {}

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first, headers, body = await _request(reader)
        seen.update(first=first, headers=headers, body=body)
        payload = json.dumps({"got": json.loads(body)}).encode()
        writer.write(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
                     b"X-Idempotency-Replayed: true\r\nContent-Length: %d\r\n\r\n%s"
                     % (len(payload), payload))
        await writer.drain()
        writer.close()

    url = await serve(echo)
    async with pooled_client(timeout=5, connections=4) as http:
        response = await http.post(f"{url}/v1/transactions?x=1", json={"amount": "850.00"},
                                   headers={"X-Idempotency": "order-1:1:block"})
    assert response.status_code == 201
    assert response.json() == {"got": {"amount": "850.00"}}
    assert response.headers["x-idempotency-replayed"] == "true"
    assert seen["first"] == b"POST /v1/transactions?x=1 HTTP/1.1"
    assert seen["headers"]["x-idempotency"] == "order-1:1:block"


@pytest.mark.parametrize("reply", [
    b"garbage\r\n\r\n",  # no status line
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab",  # a broken chunk
    b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort",  # the body cut short
], ids=["status-line", "chunk", "short-body"])
async def test_a_malformed_answer_is_an_httpx_error(serve, reply):
    # Callers catch httpx.HTTPError (a Midaz read retried, an order fetch, a result resent):
    # an aiohttp error escaping would fail the activity with an error nobody classifies.
    url = await serve(_replying(reply))
    async with pooled_client(timeout=5, connections=4) as http:
        with pytest.raises(httpx.TransportError):
            await http.get(url)


async def test_a_refused_connection_and_a_silent_server_are_httpx_errors(serve):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    async with pooled_client(timeout=5, connections=4) as http:
        # httpx-aiohttp names it ConnectTimeout; a transport error either way (never sent).
        with pytest.raises(httpx.TransportError):
            await http.get(f"http://127.0.0.1:{port}/")

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _request(reader)
        await asyncio.sleep(5)

    url = await serve(silent)
    async with pooled_client(timeout=0.3, connections=4) as http:
        with pytest.raises(httpx.ReadTimeout):
            await http.get(url)


async def test_connections_are_kept_between_calls_but_not_past_the_keepalive(serve):
    connections = []

    async def keep_alive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(writer)
        while not reader.at_eof():
            try:
                await _request(reader)
            except asyncio.IncompleteReadError:
                return
            writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
            await writer.drain()

    url = await serve(keep_alive)
    async with pooled_client(timeout=5, connections=4, keepalive=0.3) as http:
        for _ in range(3):
            assert (await http.get(url)).status_code == 204
        assert len(connections) == 1
        # Idle past its keepalive, the connection is not reused: a server closing idle ones
        # (at 5 s, above KEEPALIVE_SECONDS) never sees a call sent as it closes it.
        await asyncio.sleep(0.5)
        assert (await http.get(url)).status_code == 204
        assert len(connections) == 2


def test_the_default_keepalive_ends_before_a_servers_usual_five_seconds():
    assert KEEPALIVE_SECONDS < 5
