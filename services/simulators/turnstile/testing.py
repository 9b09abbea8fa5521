"""Test helpers: serve an app on an ephemeral port, and a monitor receiver that records pushes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI, Request, Response


@asynccontextmanager
async def serve(app: FastAPI, host: str = "127.0.0.1") -> AsyncIterator[str]:
    """Run `app` under uvicorn on a free port for the block; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=0, log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError("uvicorn stopped before starting")
            await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        await task


class EventReceiver:
    """A stand-in for the pickup system's monitor endpoint; fails the first `fail_first` POSTs."""

    def __init__(self, fail_first: int = 0) -> None:
        self.fail_first = fail_first
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.refused = 0
        self._arrived = asyncio.Event()
        self.app = FastAPI()
        self.app.add_api_route("/{path:path}", self._receive, methods=["POST"])

    async def _receive(self, path: str, request: Request) -> Response:
        if self.refused < self.fail_first:
            self.refused += 1
            return Response(status_code=503)
        self.received.append((path, await request.json()))
        self._arrived.set()
        return Response(status_code=200)

    def of(self, endpoint: str) -> list[dict[str, Any]]:
        """Bodies received on paths ending in `/<endpoint>`."""
        return [body for path, body in self.received if path.rsplit("/", 1)[-1] == endpoint]

    async def wait_for(self, count: int, timeout: float = 5.0) -> list[tuple[str, dict[str, Any]]]:
        """Wait until at least `count` notifications have arrived."""
        async with asyncio.timeout(timeout):
            while len(self.received) < count:
                self._arrived.clear()
                await self._arrived.wait()
        return self.received


_SESSION = object()


class SimClient:
    """Speaks to a simulator the way a Control iD client does, plus the `/_sim/` hooks."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.session: str | None = None

    async def login(self, login: str = "admin", password: str = "admin") -> str:
        """Log in and keep the session for later calls."""
        response = await self.http.post("/login.fcgi", json={"login": login, "password": password})
        response.raise_for_status()
        self.session = response.json()["session"]
        return self.session

    async def call(
        self, command: str, body: dict[str, Any] | None = None, session: Any = _SESSION,
        timeout: Any = httpx.USE_CLIENT_DEFAULT,
    ) -> httpx.Response:
        """POST `/<command>.fcgi`; `session=None` sends no `?session=`."""
        token = self.session if session is _SESSION else session
        params = {"session": token} if token is not None else {}
        return await self.http.post(f"/{command}.fcgi", params=params, json=body or {},
                                    timeout=timeout)

    async def ok(self, command: str, body: dict[str, Any] | None = None) -> Any:
        """`call` that must succeed; returns the JSON body (None when empty)."""
        response = await self.call(command, body)
        response.raise_for_status()
        return response.json() if response.content else None

    async def present(self, **credential: Any) -> dict[str, Any]:
        """`POST /_sim/access`: show a credential at the turnstile."""
        response = await self.http.post("/_sim/access", json=credential)
        response.raise_for_status()
        return response.json()
