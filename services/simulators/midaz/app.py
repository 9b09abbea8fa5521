"""Midaz simulator app factory and runner."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import uvicorn
from fastapi import Depends, FastAPI

from services.simulators.midaz import (
    routes_accounting,
    routes_crm,
    routes_onboarding,
    routes_sim,
    routes_transactions,
)
from services.simulators.midaz.deps import (
    AuthRefused,
    GatewayTimeout,
    auth_refused,
    gateway_timeout,
    require_token,
)
from services.simulators.midaz.errors import install_handlers
from services.simulators.midaz.state import MidazState, SimConfig
from services.simulators.oauth import DEFAULT_TTL_S, OAuthClient, TokenIssuer, token_router


def create_app(
    *, lag_s: float = 0.0, error_style: str = "v4",
    clients: Mapping[str, OAuthClient] | None = None, token_ttl_s: int = DEFAULT_TTL_S,
) -> FastAPI:
    """A fresh in-memory Midaz issuing tokens to `clients` (default: the dev client); its API
    takes only those tokens, unexpired (harnesses authenticate with `oauth.IssuedBearer`)."""
    config = SimConfig(lag_s=lag_s, error_style=error_style)
    app = FastAPI(title="Midaz simulator", docs_url="/_sim/docs", openapi_url="/_sim/openapi.json")
    app.state.initial_config = dataclasses.replace(config)
    app.state.sim = MidazState(config=config)
    issuer = TokenIssuer(ttl_s=token_ttl_s, clock=app.state.sim.clock)
    if clients is not None:
        issuer.clients = dict(clients)
    app.state.oauth = issuer
    install_handlers(app)
    app.add_exception_handler(GatewayTimeout, gateway_timeout)
    app.add_exception_handler(AuthRefused, auth_refused)
    authed = [Depends(require_token)]
    app.include_router(routes_onboarding.router, dependencies=authed)
    app.include_router(routes_transactions.router, dependencies=authed)
    app.include_router(routes_crm.router, dependencies=authed)
    app.include_router(routes_accounting.router, dependencies=authed)
    app.include_router(routes_sim.router)
    app.include_router(token_router(lambda request: request.app.state.oauth))
    return app


def main(host: str = "127.0.0.1", port: int = 3002, **options: object) -> None:
    """Serve a fresh simulator with uvicorn (blocks)."""
    uvicorn.run(create_app(**options), host=host, port=port, log_level="warning")  # type: ignore[arg-type]
