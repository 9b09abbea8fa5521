"""Deliver one notice until the gateway takes it, on the Standard Webhooks retry schedule."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from services.simulators.hub.notice import build_notice, encode
from services.simulators.hub.sender import prepare_notice

# Seconds before each attempt, as Standard Webhooks (Svix) schedules them: immediately, 5s,
# 5m, 30m, 2h, 5h, 10h, 10h. Eight attempts, then the delivery is given up.
RETRY_SCHEDULE: tuple[float, ...] = (0, 5, 300, 1800, 7200, 18000, 36000, 36000)


def retryable(status: int | None) -> bool:
    """A timeout or lost connection (None), a 5xx or a 429 is tried again; other answers end it."""
    return status is None or status >= 500 or status == 429


@dataclass(frozen=True)
class Attempt:
    """One try: the status (None when no answer came) and what was said."""

    status: int | None
    detail: str
    timestamp: int
    signature: str


@dataclass
class Delivery:
    """Every attempt of one `webhook-id`, and whether the gateway took it."""

    msg_id: str
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def delivered(self) -> bool:
        """The last attempt was answered 2xx."""
        last = self.attempts[-1].status if self.attempts else None
        return last is not None and 200 <= last < 300


async def deliver(
    url: str,
    secret: str | list[str],
    order_id: str,
    revision: int,
    *,
    client: httpx.AsyncClient,
    msg_id: str | None = None,
    schedule: tuple[float, ...] = RETRY_SCHEDULE,
    scale: float = 1.0,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.time,
    on_attempt: Callable[[int, Attempt], None] | None = None,
    **options: Any,
) -> Delivery:
    """POST until a 2xx or a final answer, waiting `schedule` × `scale` between tries.

    The body and the `webhook-id` stay the same on every attempt; the timestamp and the
    signature are fresh each time, as a Standard Webhooks sender re-signs each redelivery.
    """
    body = options.pop("body", None) or encode(
        build_notice(order_id, revision, extra=options.pop("extra", None)))
    delivery = Delivery(msg_id or f"msg_{uuid.uuid4().hex}")
    for number, delay in enumerate(schedule, start=1):
        if delay:
            await sleep(delay * scale)
        notice = prepare_notice(secret, order_id, revision, msg_id=delivery.msg_id, body=body,
                                timestamp=int(clock()), **options)
        try:
            response = await client.post(url, content=notice.body, headers=notice.headers)
            status, detail = response.status_code, response.text
        except httpx.TransportError as exc:  # timeouts and refused connections alike
            status, detail = None, f"{type(exc).__name__}: {exc}"
        attempt = Attempt(status, detail, int(notice.headers["webhook-timestamp"]),
                          notice.headers["webhook-signature"])
        delivery.attempts.append(attempt)
        if on_attempt is not None:
            on_attempt(number, attempt)
        if not retryable(status):
            break
    return delivery
