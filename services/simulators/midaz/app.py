"""Midaz simulator app factory and runner."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import uvicorn
from fastapi import Depends, FastAPI

from services.simulators.midaz import routes_crm, routes_onboarding, routes_sim, routes_transactions
from services.simulators.midaz.deps import GatewayTimeout, gateway_timeout, require_token
from services.simulators.midaz.errors import install_handlers
from services.simulators.midaz.state import MidazState, SimConfig


def create_app(
    *, tokens: Iterable[str] | None = None, lag_s: float = 0.0, error_style: str = "v3"
) -> FastAPI:
    """A fresh in-memory Midaz; `tokens=None` accepts any bearer token."""
    config = SimConfig(
        tokens=frozenset(tokens) if tokens is not None else None,
        lag_s=lag_s,
        error_style=error_style,
    )
    app = FastAPI(title="Midaz simulator", docs_url="/_sim/docs", openapi_url="/_sim/openapi.json")
    app.state.initial_config = dataclasses.replace(config)
    app.state.sim = MidazState(config=config)
    install_handlers(app)
    app.add_exception_handler(GatewayTimeout, gateway_timeout)
    authed = [Depends(require_token)]
    app.include_router(routes_onboarding.router, dependencies=authed)
    app.include_router(routes_transactions.router, dependencies=authed)
    app.include_router(routes_crm.router, dependencies=authed)
    app.include_router(routes_sim.router)
    return app


def main(host: str = "127.0.0.1", port: int = 3002, **options: object) -> None:
    """Serve a fresh simulator with uvicorn (blocks)."""
    uvicorn.run(create_app(**options), host=host, port=port, log_level="warning")  # type: ignore[arg-type]
