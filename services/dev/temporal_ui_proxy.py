"""The Temporal Web UI behind a read-only door: pages and reads pass, write actions don't."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import AsyncIterator

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

log = logging.getLogger("esteira.temporal-ui")
READ_METHODS = frozenset({"GET", "HEAD"})
# The UI reads its settings here; with write actions off it hides the buttons too.
SETTINGS_PATH = "/api/v1/settings"
READ_ONLY_CODE = "temporal-ui.read-only"
UNIX_PREFIX = "unix:"
# The Host the UI sees through the socket: its own loopback inside the namespace.
UNIX_HOST = "127.0.0.1"
# Hop-by-hop and length headers: the proxy sets its own.
_DROPPED = frozenset({"host", "connection", "keep-alive", "transfer-encoding", "content-length",
                      "content-encoding", "upgrade"})


def create_app(upstream: str, transport: httpx.AsyncBaseTransport | None = None) -> Starlette:
    """A proxy to the UI at `upstream` (`http://host:port`, or `unix:/path` for the UI in
    `temporal_sandbox`'s private network) that refuses every method but GET and HEAD."""
    if upstream.startswith(UNIX_PREFIX):
        transport = transport or httpx.AsyncHTTPTransport(uds=upstream[len(UNIX_PREFIX):])
        upstream = f"http://{UNIX_HOST}"
    client = httpx.AsyncClient(base_url=upstream, transport=transport, timeout=60)

    async def forward(request: Request) -> Response:
        if request.method not in READ_METHODS:
            return JSONResponse(
                {"code": READ_ONLY_CODE,
                 "message": "The Temporal Web UI is read-only here; set "
                            "ESTEIRA_TEMPORAL_SERVER__UI_WRITE_ACTIONS=true to allow writes."},
                status_code=403)
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _DROPPED]
        url = httpx.URL(path=request.url.path, query=request.url.query.encode())
        upstream_response = await client.request(request.method, url, headers=headers)
        content = upstream_response.content
        if request.url.path == SETTINGS_PATH and upstream_response.status_code == 200:
            content = json.dumps(_read_only_settings(json.loads(content))).encode()
        kept = {k: v for k, v in upstream_response.headers.items() if k.lower() not in _DROPPED}
        return Response(content, upstream_response.status_code, headers=kept)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()

    methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    return Starlette(routes=[Route("/{path:path}", forward, methods=methods)], lifespan=lifespan)


def _read_only_settings(ui_settings: dict) -> dict:
    """Write actions hidden; the codec server called with the operator's dashboard cookie."""
    codec = ui_settings.get("Codec") or {}
    if codec.get("Endpoint"):
        ui_settings["Codec"] = {**codec, "IncludeCredentials": True}
    return {**ui_settings, "DisableWriteActions": True}


async def serve(host: str, port: int, upstream: str) -> None:
    """Publish the UI at `upstream` on host:port until SIGINT/SIGTERM (`esteira dev` child)."""
    config = uvicorn.Config(create_app(upstream), host=host, port=port, log_config=None,
                            access_log=False)
    log.info("Temporal Web UI (read-only) on http://%s:%s", host, port)
    await uvicorn.Server(config).serve()


if __name__ == "__main__":
    from shared.logs import configure_logging
    from shared.settings import Settings

    configure_logging(Settings(), process="temporal-ui")
    listen_host, listen_port, upstream_url = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    asyncio.run(serve(listen_host, listen_port, upstream_url))
