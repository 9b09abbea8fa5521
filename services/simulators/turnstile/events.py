"""The Monitor: pushes access logs and turnstile turns to the configured server."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from services.simulators.turnstile.faults import FaultState

MAX_KEPT = 1000


@dataclass
class Delivery:
    """One monitor POST and what became of it."""

    id: int
    endpoint: str
    url: str
    body: dict[str, Any]
    status: str = "pending"  # pending | delivered | failed | dropped
    attempts: int = 0
    last_status: int | None = None
    last_error: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON view for `/_sim/deliveries`."""
        return asdict(self)


def monitor_config(url: str | None, request_timeout_ms: int = 5000) -> dict[str, str]:
    """The `monitor` configuration block for a base URL such as `http://h:8000/api/notifications`."""
    if not url:
        return {"hostname": "", "port": "", "path": "", "request_timeout": str(request_timeout_ms)}
    parts = urlsplit(url)
    return {
        "hostname": parts.hostname or "",
        "port": str(parts.port or 80),
        "path": parts.path.strip("/"),
        "request_timeout": str(request_timeout_ms),
    }


def dao_body(device_id: int, log: dict[str, Any]) -> dict[str, Any]:
    """`/dao` envelope for an inserted access log; inner values are strings as on the device."""
    values = {k: "" if v is None else str(v) for k, v in log.items()}
    change = {"object": "access_logs", "type": "inserted", "values": values}
    return {"object_changes": [change], "device_id": device_id}


def catra_body(device_id: int, event: dict[str, Any]) -> dict[str, Any]:
    """`/catra_event` body for a turn or give-up (shape not captured from hardware)."""
    return {
        "event": {
            "type": event["type"],
            "uuid": event["identification"],
            "time": event["timestamp"],
        },
        "access_event_id": event["id"],
        "device_id": device_id,
    }


class Monitor:
    """Ordered, retried delivery of monitor notifications, one POST at a time."""

    def __init__(self, faults: FaultState, *, retries: int, retry_delay: float) -> None:
        self.faults = faults
        self.retries = retries
        self.retry_delay = retry_delay
        self.config: dict[str, str] = monitor_config(None)
        self.deliveries: list[Delivery] = []
        self._queue: asyncio.Queue[Delivery] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._client: httpx.AsyncClient | None = None
        self._seq = 0

    def url(self, endpoint: str) -> str | None:
        """Where `endpoint` is posted: `http://hostname:port/<path>/<endpoint>`."""
        host = self.config.get("hostname")
        if not host:
            return None
        path = self.config.get("path", "").strip("/")
        prefix = f"/{path}" if path else ""
        return f"http://{host}:{self.config.get('port') or 80}{prefix}/{endpoint}"

    def publish(self, endpoint: str, body: dict[str, Any]) -> None:
        """Queue a notification; a no-op when no monitor host is configured."""
        url = self.url(endpoint)
        if url is None:
            return
        copies = 2 if self.faults.current.push_duplicate else 1
        for _ in range(copies):
            self._seq += 1
            delivery = Delivery(self._seq, endpoint, url, body)
            self.deliveries.append(delivery)
            del self.deliveries[:-MAX_KEPT]
            if self.faults.current.push_drop:
                delivery.status = "dropped"
                continue
            self._ensure_worker().put_nowait(delivery)

    def _ensure_worker(self) -> asyncio.Queue[Delivery]:
        # Started on first use: ASGI test transports skip lifespan, and nothing runs at import.
        if self._queue is None:
            self._queue = asyncio.Queue()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._run(self._queue))
        return self._queue

    async def _run(self, queue: asyncio.Queue[Delivery]) -> None:
        while True:
            delivery = await queue.get()
            try:
                await self._deliver(delivery)
            finally:
                queue.task_done()

    async def _deliver(self, delivery: Delivery) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient()
        timeout = int(self.config.get("request_timeout") or 5000) / 1000
        for attempt in range(1, self.retries + 2):
            delivery.attempts = attempt
            try:
                response = await self._client.post(
                    delivery.url, json=delivery.body, timeout=timeout
                )
                delivery.last_status = response.status_code
                if response.is_success:
                    delivery.status = "delivered"
                    return
                delivery.last_error = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                delivery.last_error = f"{type(exc).__name__}: {exc}"
            if attempt <= self.retries:
                await asyncio.sleep(self.retry_delay)
        delivery.status = "failed"

    async def flush(self, timeout: float = 10.0) -> None:
        """Wait until every queued notification is delivered or given up."""
        if self._queue is not None:
            await asyncio.wait_for(self._queue.join(), timeout)

    async def aclose(self) -> None:
        """Stop the worker and close the HTTP client."""
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError, RuntimeError):
                await self._worker
        self._worker, self._queue = None, None
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def reset(self) -> None:
        """Forget queued and past deliveries."""
        await self.aclose()
        self.deliveries.clear()
