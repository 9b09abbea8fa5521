"""Run the REST API until SIGINT/SIGTERM."""

from __future__ import annotations

import logging

import uvicorn

from services.api.app import create_app
from services.api.context import ApiContext
from shared.auth import resolve_api_key
from shared.db.engine import create_engine, session_factory
from shared.instances import registered_instance
from shared.metrics import bridged_runtime
from shared.settings import Settings
from shared.temporal import connect

log = logging.getLogger("esteira.api")


async def run_api(settings: Settings) -> None:
    """Serve the REST API on `ESTEIRA_PORTS__API` (uvicorn handles the signals)."""
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    try:
        async with bridged_runtime() as runtime:
            context = ApiContext(
                settings=settings, engine=engine, sessions=sessions,
                api_key=resolve_api_key(settings),
                connect_temporal=lambda: connect(settings, runtime=runtime),
            )
            config = uvicorn.Config(
                create_app(context), host=settings.host, port=settings.ports.api,
                log_config=None, access_log=False, timeout_graceful_shutdown=10,
            )
            async with registered_instance(sessions, "api", settings.cluster):
                log.info("REST API listening on http://%s:%s", settings.host, settings.ports.api)
                await uvicorn.Server(config).serve()
    finally:
        await engine.dispose()
