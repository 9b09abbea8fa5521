"""Build, sign and POST an execution notice like the Streaming Hub does."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx

from services.simulators.hub.notice import build_notice, encode
from services.simulators.hub.signing import signature_header


@dataclass(frozen=True)
class PreparedNotice:
    """Headers and exact body bytes of one delivery."""

    headers: dict[str, str]
    body: bytes


def prepare_notice(
    secret: str | list[str],
    order_id: str,
    revision: int,
    *,
    msg_id: str | None = None,
    timestamp: int | None = None,
    skew_s: int = 0,
    extra: dict[str, Any] | None = None,
    body: bytes | None = None,
) -> PreparedNotice:
    """Sign a notice; `secret` may list several (rotation); `body` overrides the JSON."""
    secrets = [secret] if isinstance(secret, str) else list(secret)
    payload = body if body is not None else encode(build_notice(order_id, revision, extra=extra))
    msg_id = msg_id or f"msg_{uuid.uuid4().hex}"
    ts = (timestamp if timestamp is not None else int(time.time())) + skew_s
    headers = {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(ts),
        "webhook-signature": signature_header(secrets, msg_id, ts, payload),
    }
    return PreparedNotice(headers, payload)


def send_notice(
    url: str,
    secret: str | list[str],
    order_id: str,
    revision: int,
    *,
    client: httpx.Client | None = None,
    timeout_s: float = 15.0,
    **options: Any,
) -> httpx.Response:
    """POST a signed notice to `url` (blocking); options go to `prepare_notice`."""
    notice = prepare_notice(secret, order_id, revision, **options)
    if client is not None:
        return client.post(url, content=notice.body, headers=notice.headers)
    with httpx.Client(timeout=timeout_s) as own:
        return own.post(url, content=notice.body, headers=notice.headers)


async def asend_notice(
    url: str,
    secret: str | list[str],
    order_id: str,
    revision: int,
    *,
    client: httpx.AsyncClient | None = None,
    timeout_s: float = 15.0,
    **options: Any,
) -> httpx.Response:
    """Async `send_notice`; pass an `AsyncClient` (e.g. on an ASGITransport) to reuse it."""
    notice = prepare_notice(secret, order_id, revision, **options)
    if client is not None:
        return await client.post(url, content=notice.body, headers=notice.headers)
    async with httpx.AsyncClient(timeout=timeout_s) as own:
        return await own.post(url, content=notice.body, headers=notice.headers)
