"""Request dependencies: bearer auth, path checks and route-level faults."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import Depends, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from activities.sisbajud.contracts.orders import is_uuid
from services.simulators.midaz.errors import MidazError
from services.simulators.midaz.faults import Fault
from services.simulators.midaz.model import Ledger
from services.simulators.midaz.state import MidazState


async def sim(request: Request) -> MidazState:
    """The simulator state attached to the app."""
    return request.app.state.sim


Sim = Annotated[MidazState, Depends(sim)]


class AuthRefused(Exception):
    """Midaz's auth layer (lib-auth's `Authorize`) refused the call before any handler ran."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


async def require_token(request: Request) -> None:
    """What lib-auth's `Authorize` answers in front of every Midaz route: 401 `Missing Token`
    (text) without a bearer, 401 `Unauthorized` (text, `http.StatusText`) for one that does not
    parse as a JWT or that the auth service refuses (bad signature, expired, unknown)."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthRefused("Missing Token")
    refused = request.app.state.oauth.check(token.strip())
    if refused is not None:
        raise AuthRefused("Unauthorized")


async def auth_refused(request: Request, exc: Exception) -> PlainTextResponse:
    """lib-auth's `c.Status(401).SendString(...)`: plain text, no problem+json."""
    assert isinstance(exc, AuthRefused)
    return PlainTextResponse(exc.text, status_code=401)


def check_uuid(**params: str) -> None:
    """400 `0065` for a path id that is not a UUID (Midaz validates ids first)."""
    bad = [name for name, value in params.items() if not is_uuid(value)]
    if bad:
        raise MidazError("0065", ", ".join(bad))


async def ledger_of(organization_id: str, ledger_id: str, state: Sim) -> Ledger:
    """The ledger named by the path."""
    check_uuid(organization_id=organization_id, ledger_id=ledger_id)
    with state.lock:
        return state.ledger(organization_id, ledger_id)


LedgerDep = Annotated[Ledger, Depends(ledger_of)]


class GatewayTimeout(Exception):
    """Raised after a `timeout` fault has held the request."""


async def route_fault(request: Request, state: Sim) -> Fault | None:
    """Consume the next fault for this route; apply `error` / `timeout` here."""
    route = request.scope.get("route")
    name = getattr(route, "name", "") or ""
    with state.lock:
        fault = state.faults.take(name)
    if fault is None:
        return None
    if fault.kind == "timeout":
        await asyncio.sleep(fault.delay_s)
        raise GatewayTimeout()
    if fault.kind == "error":
        raise MidazError(fault.code or "0046", status=fault.status)
    return fault


RouteFault = Annotated[Fault | None, Depends(route_fault)]


async def gateway_timeout(request: Request, exc: Exception) -> JSONResponse:
    """What a proxy in front of Midaz answers once the upstream gave up."""
    return JSONResponse({"message": "upstream request timeout"}, status_code=504)
