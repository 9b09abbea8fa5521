"""Helpers for tests that drive the Midaz simulator over HTTP."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI

from services.simulators.oauth import IssuedBearer


@dataclass(frozen=True)
class LedgerRef:
    """An organization + ledger pair and its path prefix."""

    organization_id: str
    ledger_id: str

    @property
    def base(self) -> str:
        """`/v1/organizations/{org}/ledgers/{ledger}`."""
        return f"/v1/organizations/{self.organization_id}/ledgers/{self.ledger_id}"


def client(app: FastAPI, *, authed: bool = True) -> httpx.AsyncClient:
    """An in-process client with tokens the simulator issued (`authed=False`: none)."""
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://midaz",
        auth=IssuedBearer(app) if authed else None,
    )


async def bootstrap(http: httpx.AsyncClient, **ids: str) -> LedgerRef:
    """Create an organization, a ledger and the BRL asset."""
    response = await http.post("/_sim/bootstrap", json=ids)
    response.raise_for_status()
    body = response.json()
    return LedgerRef(body["organizationId"], body["ledgerId"])


async def seed_account(
    http: httpx.AsyncClient, ref: LedgerRef, alias: str, available: str = "0", **fields: Any
) -> dict[str, Any]:
    """Create an account with a balance already in place; returns the account JSON."""
    response = await http.post(
        "/_sim/accounts",
        json={
            "organizationId": ref.organization_id,
            "ledgerId": ref.ledger_id,
            "alias": alias,
            "available": available,
            **fields,
        },
    )
    response.raise_for_status()
    return response.json()["account"]


async def balance(http: httpx.AsyncClient, ref: LedgerRef, alias: str) -> dict[str, Any]:
    """The `default` balance of `alias`."""
    response = await http.get(f"{ref.base}/accounts/alias/{alias}/balances")
    response.raise_for_status()
    (item,) = [b for b in response.json()["items"] if b["key"] == "default"]
    return item


def send(
    sources: dict[str, str],
    destinations: dict[str, str],
    *,
    asset: str = "BRL",
    metadata: dict[str, Any] | None = None,
    **top: Any,
) -> dict[str, Any]:
    """A `/transactions/{json|block|unblock}` body with one amount leg per alias."""
    total = sum((Decimal(v) for v in sources.values()), Decimal(0))

    def legs(side: dict[str, str]) -> list[dict[str, Any]]:
        return [
            {"accountAlias": alias, "amount": {"asset": asset, "value": value}}
            for alias, value in side.items()
        ]

    body: dict[str, Any] = {
        "send": {
            "asset": asset,
            "value": str(total),
            "source": {"from": legs(sources)},
            "distribute": {"to": legs(destinations)},
        },
        **top,
    }
    if metadata is not None:
        body["metadata"] = metadata
    return body


def write_headers(key: str, ttl_s: int = 604800) -> dict[str, str]:
    """`X-Idempotency` + `X-TTL`, as the executor sends on every ledger write."""
    return {"X-Idempotency": key, "X-TTL": str(ttl_s)}
