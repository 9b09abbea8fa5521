"""The ops port of one process: `/metrics`, `/livez` and `/readyz` on `ESTEIRA_PORTS__METRICS`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable

import uvicorn
from temporalio.client import Client

from shared import metrics
from shared.readiness import Probe, evaluate, temporal_probe
from shared.settings import Settings

log = logging.getLogger("esteira.ops")
# A request line and headers bigger than this are not a probe or a scrape: refused.
_MAX_HEAD_BYTES = 8192
_READ_TIMEOUT_SECONDS = 5.0
PATHS = ("/metrics", "/livez", "/readyz")


def domain_probe(domain: str, started: bool) -> Probe:
    """`domain:<d>`: whether this worker started the domain (its settings were complete)."""

    async def run() -> tuple[bool, str]:
        return started, "started" if started else "not started: see this process's log"

    return Probe(f"domain:{domain}", run)


async def _exposition() -> bytes:
    return metrics.exposition()


class OpsServer:
    """This process's own metrics and probes, apart from the system's `/api/ready`.

    `/livez` is answered by the event loop itself, so a hung loop fails it and the
    orchestrator restarts the process; `/readyz` runs only this process's probes (its store,
    its Temporal, its own domains started), never another process's.
    """

    def __init__(self, settings: Settings, process: str,
                 exposition: Callable[[], Awaitable[bytes]] = _exposition) -> None:
        self.process = process
        self.host, self.port = settings.host, settings.ports.metrics
        self._exposition = exposition
        self._probes: list[Probe] = []
        self._started = False
        self._server: asyncio.base_events.Server | None = None

    def watch(self, *probes: Probe) -> None:
        """Add probes `/readyz` runs from now on."""
        self._probes.extend(probes)

    def watch_temporal(self, client: Client) -> None:
        """Add the probe of this process's Temporal connection."""

        async def connected() -> Client:
            return client

        self.watch(temporal_probe(connected))

    def watch_listener(self, server: uvicorn.Server) -> None:
        """Add the probe of an HTTP server of this process accepting connections."""

        async def listening() -> tuple[bool, str]:
            return server.started, "accepting" if server.started else "not listening yet"

        self.watch(Probe("listening", listening))

    def started(self) -> None:
        """This process's own work (domains, folders, listeners) has started."""
        self._started = True

    async def __aenter__(self) -> OpsServer:
        if self.port:
            self._server = await asyncio.start_server(self._handle, self.host, self.port)
            log.info("Ops port (metrics, liveness, readiness) of %s on http://%s:%s",
                     self.process, self.host, self.port)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def readiness(self) -> tuple[bool, dict]:
        """This process's verdict and the body `/readyz` answers (names and ok, no detail)."""
        started = Probe("started", self._started_probe)
        verdict = await evaluate([*self._probes, started])
        return verdict.ready, {
            "status": "Ready" if verdict.ready else "NotReady", "process": self.process,
            "checks": [{"name": c.name, "ok": c.ok} for c in verdict.checks]}

    async def _started_probe(self) -> tuple[bool, str]:
        return self._started, "running" if self._started else "starting"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _READ_TIMEOUT_SECONDS)
            status, content_type, body = await self._answer(head)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError,
                ConnectionError):
            writer.close()
            return
        except Exception as exc:  # a probe of ours broke: say so, keep serving
            log.warning("Ops request failed: %s", exc)
            status, content_type, body = "500 Internal Server Error", "text/plain", b"error\n"
        writer.write(f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
                     f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                     + body)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    async def _answer(self, head: bytes) -> tuple[str, str, bytes]:
        if len(head) > _MAX_HEAD_BYTES:
            return "431 Request Header Fields Too Large", "text/plain", b"too large\n"
        method, _, rest = head.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
        path = rest.split(" ", 1)[0].split("?", 1)[0]
        if method != "GET":
            return "405 Method Not Allowed", "text/plain", b"GET only\n"
        if path == "/metrics":
            return "200 OK", metrics.CONTENT_TYPE, await self._exposition()
        if path == "/livez":
            return "200 OK", "application/json", json.dumps(
                {"status": "Alive", "process": self.process}).encode()
        if path == "/readyz":
            ready, body = await self.readiness()
            return ("200 OK" if ready else "503 Service Unavailable", "application/json",
                    json.dumps(body).encode())
        return "404 Not Found", "text/plain", b"/metrics, /livez or /readyz\n"
