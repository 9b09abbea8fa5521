"""The seed's fetch table at delivery time: is the notice's order there to execute?"""

from __future__ import annotations

import asyncio
from typing import Protocol

import httpx
from temporalio.exceptions import ApplicationError

from activities.sisbajud.operator.trail import Sessions
from activities.sisbajud.orders import OrderActivities
from shared.contracts.sisbajud import FetchOrderInput, FetchOrderResult
from shared.settings import Settings


class OrderUnavailable(Exception):
    """The Mensageria gave no usable answer (401, 429, 5xx, network, deadline): retry later."""


class OrderLookup(Protocol):
    """Fetch one order as the workflow would; transient failures raise `OrderUnavailable`."""

    async def __call__(self, order_id: str) -> FetchOrderResult:
        """FOUND, WITHDRAWN (404/410) or PARKED (any other 4xx, or an order that can't run)."""
        ...


class MensageriaLookup:
    """The order workflow's own fetch activity, called directly under a short deadline."""

    def __init__(self, orders: OrderActivities, timeout_s: float) -> None:
        self._orders = orders
        self._timeout_s = timeout_s

    async def __call__(self, order_id: str) -> FetchOrderResult:
        """One `GET …/orders/{orderId}`, classified exactly as the workflow classifies it."""
        try:
            # A total deadline: httpx's timeouts bound each phase, not the whole exchange.
            async with asyncio.timeout(self._timeout_s):
                return await self._orders.fetch_order(FetchOrderInput(order_id=order_id))
        except TimeoutError as exc:
            raise OrderUnavailable(f"no answer within {self._timeout_s:g}s") from exc
        except ApplicationError as exc:  # the activity's retryable `mensageria.unavailable`
            raise OrderUnavailable(str(exc)) from exc


def mensageria_lookup(settings: Settings, sessions: Sessions, http: httpx.AsyncClient,
                      timeout_s: float) -> MensageriaLookup:
    """The gateway's lookup: the fetch activity on the gateway's own HTTP client."""
    return MensageriaLookup(OrderActivities(settings, sessions, http), timeout_s=timeout_s)
