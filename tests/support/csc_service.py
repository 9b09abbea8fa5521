"""A Cloud Signature Consortium API service on loopback: certomancer-csc-dummy over the LTV PKI.

The dummy (by pyHanko's author) signs with the PKI's keys; in front of it this adds what a
real provider has: a bearer token on every call, auth/login for static credentials (HTTP
Basic, CSC API v1.0.4.0 §11.2), and a switch that makes signHash slower than any client
waits, to show a timeout.
"""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from aiohttp import web
from certomancer.registry import CertomancerConfig
from csc_dummy.csc_dummy_server import CSCWithCertomancer  # type: ignore[import-untyped]

from tests.support.ports import free_ports

TOKEN = "csc-access-token"
USER, PASSWORD = "esteira", "csc-password"


@dataclass
class CscService:
    """The running service: its URL, what it saw, and its switches."""

    url: str
    seen_authorization: list[str] = field(default_factory=list)
    slow_seconds: float = 0.0


async def _answered_by_the_gate(request: web.Request) -> web.Response:
    raise web.HTTPNotFound()  # the gate answers auth/login before routing gets here


@contextmanager
def csc_service(config_path: str) -> Iterator[CscService]:
    """Serve the dummy for the PKI in `config_path` while the block runs."""
    port = free_ports(1)[0]
    service = CscService(f"http://127.0.0.1:{port}")
    ready = threading.Event()
    loop = asyncio.new_event_loop()

    @web.middleware
    async def gate(request: web.Request, handler):
        if request.path == "/csc/v1/auth/login":
            expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
            if request.headers.get("Authorization") != expected:
                raise web.HTTPUnauthorized()
            return web.json_response({"access_token": TOKEN, "expires_in": 3600})
        service.seen_authorization.append(request.headers.get("Authorization", ""))
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            raise web.HTTPUnauthorized()
        if request.path.endswith("signatures/signHash") and service.slow_seconds:
            await asyncio.sleep(service.slow_seconds)
        return await handler(request)

    async def serve() -> web.AppRunner:
        dummy = CSCWithCertomancer(CertomancerConfig.from_file(config_path))
        dummy.register_routes()
        dummy.app.middlewares.append(gate)
        dummy.app.router.add_post("/csc/v1/auth/login", _answered_by_the_gate)
        runner = web.AppRunner(dummy.app)
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
        yield service
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
