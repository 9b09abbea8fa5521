"""Run the REST API until SIGINT/SIGTERM."""

from __future__ import annotations

import logging

import uvicorn

from services.api.app import create_app
from services.api.context import ApiContext
from services.api.scrape_refresh import ScrapeRefresher
from services.ops_server import OpsServer
from shared import metrics
from shared.auth import resolve_api_key
from shared.db.engine import create_engine, session_factory
from shared.http_observability import observe_http
from shared.instances import registered_instance
from shared.metrics import bridged_runtime
from shared.readiness import store_probe, temporal_probe
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
            app = create_app(context)
            observe_http(app, settings, service="api")
            config = uvicorn.Config(
                app, host=settings.host, port=settings.ports.api,
                log_config=None, access_log=False, timeout_graceful_shutdown=10,
            )
            server = uvicorn.Server(config)
            async with OpsServer(settings, "api", scraped_metrics(context)) as ops, \
                    registered_instance(sessions, "api", settings.cluster):
                # Its own store and Temporal only: /api/ready is the whole system's verdict.
                ops.watch(store_probe(engine), temporal_probe(context.temporal))
                ops.watch_listener(server)
                ops.started()
                log.info("REST API listening on http://%s:%s", settings.host, settings.ports.api)
                await server.serve()
    finally:
        await engine.dispose()


def scraped_metrics(context: ApiContext):
    """The ops port's exposition: the gauges read at scrape time, refreshed as /api/metrics does."""
    refresher = ScrapeRefresher(context)

    async def exposition() -> bytes:
        await refresher.refresh()
        return metrics.exposition()

    return exposition
