"""A TSA in front of certomancer's that wants credentials (basic or bearer), on loopback.

It forwards an authorised RFC 3161 request to the real TSA and answers 401 otherwise, and
keeps each Authorization header it saw.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import aiohttp
from aiohttp import web

from tests.support.ports import free_ports


@contextmanager
def tsa_gate(upstream: str, expected_authorization: str) -> Iterator[tuple[str, list[str]]]:
    """(URL of the gated TSA, Authorization headers seen) while the block runs."""
    seen: list[str] = []
    port = free_ports(1)[0]
    ready = threading.Event()
    loop = asyncio.new_event_loop()

    async def stamp(request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        seen.append(header)
        if header != expected_authorization:
            return web.Response(status=401)
        async with aiohttp.ClientSession() as session, session.post(
                upstream, data=await request.read(),
                headers={"Content-Type": "application/timestamp-query"}) as answer:
            return web.Response(body=await answer.read(),
                                content_type="application/timestamp-reply")

    async def serve() -> web.AppRunner:
        app = web.Application()
        app.router.add_post("/tsa", stamp)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return runner

    def run() -> None:
        asyncio.set_event_loop(loop)
        runner = loop.run_until_complete(serve())
        ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield f"http://127.0.0.1:{port}/tsa", seen
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
