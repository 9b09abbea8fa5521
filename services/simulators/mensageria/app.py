"""Mensageria (SISBAJUD execution API) simulator app factory and runner."""

from __future__ import annotations

from collections.abc import Iterable

import uvicorn
from fastapi import FastAPI

from services.simulators.mensageria import routes, routes_sim
from services.simulators.mensageria.state import MensageriaState


def create_app(*, tokens: Iterable[str] | None = None) -> FastAPI:
    """A fresh in-memory Mensageria; `tokens=None` accepts any bearer token."""
    app = FastAPI(
        title="Mensageria simulator", docs_url="/_sim/docs", openapi_url="/_sim/openapi.json"
    )
    app.state.sim = MensageriaState(tokens=frozenset(tokens) if tokens is not None else None)
    app.add_exception_handler(routes.Refusal, routes.refusal_handler)
    app.include_router(routes.router)
    app.include_router(routes_sim.router)
    return app


def main(host: str = "127.0.0.1", port: int = 3010, tokens: Iterable[str] | None = None) -> None:
    """Serve a fresh simulator with uvicorn (blocks)."""
    uvicorn.run(create_app(tokens=tokens), host=host, port=port, log_level="warning")
