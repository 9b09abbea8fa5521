"""Run the API process (the REST API and the dashboard) until SIGINT/SIGTERM."""

from __future__ import annotations

import logging

import uvicorn

from services.api.scrape_refresh import ScrapeRefresher
from services.app import create_app
from services.app_context import ApiContext
from services.ops_server import OpsServer
from shared import metrics
from shared.auth import resolve_api_key
from shared.db.engine import create_engine
from shared.http_observability import observe_http
from shared.instances import registered_instance
from shared.metrics import bridged_runtime
from shared.readiness import store_probe, temporal_probe
from shared.settings import Settings
from shared.temporal import TemporalHandle

log = logging.getLogger("esteira.api")


async def run_api(settings: Settings) -> None:
    """Serve the REST API on `ESTEIRA_PORTS__API` (uvicorn handles the signals)."""
    engine = create_engine(settings.sqlalchemy_url)
    try:
        async with bridged_runtime() as runtime:
            context = ApiContext.build(
                settings, engine, api_key=resolve_api_key(settings),
                temporal=TemporalHandle.for_settings(settings, runtime=runtime))
            app = create_app(context)
            observe_http(app, settings, service="api")
            config = uvicorn.Config(
                app, host=settings.host, port=settings.ports.api,
                log_config=None, access_log=False, timeout_graceful_shutdown=10,
            )
            server = uvicorn.Server(config)
            async with OpsServer(settings, "api", scraped_metrics(context)) as ops, \
                    registered_instance(context.sessions, "api", settings.cluster):
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
