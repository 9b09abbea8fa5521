"""Run the gRPC server until SIGINT/SIGTERM."""

from __future__ import annotations

import logging

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from services.grpc_server.auth import ApiKeyInterceptor
from services.grpc_server.gen.esteira.v1 import system_pb2_grpc
from services.grpc_server.pickup import add_pickup
from services.grpc_server.system import SystemServicer
from services.process import stop_event
from shared.auth import resolve_api_key
from shared.db.engine import create_engine, session_factory
from shared.instances import registered_instance
from shared.settings import Settings

# Calls in progress at stop get this long before they are cancelled.
SHUTDOWN_GRACE_SECONDS = 10
log = logging.getLogger("esteira.grpc")


async def run_grpc(settings: Settings) -> None:
    """Serve `esteira.v1` services and gRPC health on `ESTEIRA_PORTS__GRPC`."""
    stop = stop_event()
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    server = grpc.aio.server(interceptors=[ApiKeyInterceptor(resolve_api_key(settings))])
    system_pb2_grpc.add_SystemServiceServicer_to_server(SystemServicer(settings, sessions), server)
    add_pickup(server, settings, sessions)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    address = f"{settings.host}:{settings.ports.grpc}"
    server.add_insecure_port(address)
    try:
        async with registered_instance(sessions, "grpc"):
            await server.start()
            await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
            log.info("gRPC server listening on %s", address)
            await stop.wait()
            await health_servicer.enter_graceful_shutdown()
            await server.stop(SHUTDOWN_GRACE_SECONDS)
    finally:
        await engine.dispose()
