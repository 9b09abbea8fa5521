"""Run the webhook gateway until SIGINT/SIGTERM."""

from __future__ import annotations

import logging

import uvicorn

from services.composition import compose
from services.ops_server import OpsServer
from services.webhook_gateway.app import WEBHOOK_PATH, GatewayDeps, create_app
from services.webhook_gateway.secrets import resolve_secrets
from services.webhook_gateway.signature import StandardWebhooksV1
from shared.db.engine import create_engine, session_factory
from shared.http_observability import observe_http
from shared.instances import registered_instance
from shared.readiness import store_probe
from shared.settings import Settings
from shared.temporal import TemporalHandle

log = logging.getLogger("esteira.webhook")


async def run_webhook(settings: Settings) -> None:
    """Serve the gateway on `ESTEIRA_PORTS__WEBHOOK` (uvicorn handles the signals)."""
    sis = settings.sisbajud
    scheme = StandardWebhooksV1(resolve_secrets(settings, generate=True),
                                max_skew_s=sis.hub_webhook_max_skew_seconds)
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    # The gateway answers without Temporal: its handle is never asked for a client.
    faces = compose(settings, sessions, TemporalHandle.for_settings(settings))
    try:
        app = create_app(GatewayDeps(scheme, faces.sisbajud))
        observe_http(app, settings, service="webhook")
        config = uvicorn.Config(app, host=settings.host, port=settings.ports.webhook,
                                log_config=None, access_log=False, timeout_graceful_shutdown=10)
        server = uvicorn.Server(config)
        async with OpsServer(settings, "webhook") as ops, \
                registered_instance(sessions, "webhook", settings.cluster):
            ops.watch(store_probe(engine))
            ops.watch_listener(server)
            ops.started()
            log.info("Webhook gateway listening on http://%s:%s%s", settings.host,
                     settings.ports.webhook, WEBHOOK_PATH)
            await server.serve()
    finally:
        await faces.sisbajud.aclose()
        await engine.dispose()
