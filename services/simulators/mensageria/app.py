"""Mensageria (SISBAJUD execution API) simulator app factory and runner."""

from __future__ import annotations

from collections.abc import Mapping

import uvicorn
from fastapi import FastAPI

from services.simulators.mensageria import routes, routes_sim
from services.simulators.mensageria.state import MensageriaState
from services.simulators.oauth import DEFAULT_TTL_S, OAuthClient, TokenIssuer, token_router


def create_app(*, clients: Mapping[str, OAuthClient] | None = None,
               token_ttl_s: int = DEFAULT_TTL_S) -> FastAPI:
    """A fresh in-memory Mensageria issuing tokens to `clients` (default: the dev client); its
    API takes only those tokens, unexpired (harnesses authenticate with
    `oauth.IssuedBearer`)."""
    app = FastAPI(
        title="Mensageria simulator", docs_url="/_sim/docs", openapi_url="/_sim/openapi.json"
    )
    app.state.sim = MensageriaState()
    issuer = TokenIssuer(ttl_s=token_ttl_s)
    if clients is not None:
        issuer.clients = dict(clients)
    app.state.oauth = issuer
    app.add_exception_handler(routes.Refusal, routes.refusal_handler)
    app.include_router(routes.router)
    app.include_router(routes_sim.router)
    app.include_router(token_router(lambda request: request.app.state.oauth))
    return app


def main(host: str = "127.0.0.1", port: int = 3010,
         clients: Mapping[str, OAuthClient] | None = None) -> None:
    """Serve a fresh simulator with uvicorn (blocks)."""
    uvicorn.run(create_app(clients=clients), host=host, port=port,
                log_level="warning")
