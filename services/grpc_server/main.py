"""Run the gRPC server until SIGINT/SIGTERM."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from services.composition import Faces, compose
from services.grpc_server.auth import ApiKeyInterceptor
from services.grpc_server.decoding import DecodingInterceptor
from services.grpc_server.gen.esteira.v1 import pickup_pb2, system_pb2, system_pb2_grpc
from services.grpc_server.pickup import add_pickup
from services.grpc_server.signer import add_signer
from services.grpc_server.sisbajud import add_sisbajud
from services.grpc_server.system import SystemServicer
from services.grpc_server.tls import add_port
from services.ops_server import OpsServer
from services.process import stop_event
from shared.auth import resolve_api_key
from shared.db.engine import create_engine, session_factory
from shared.instances import registered_instance
from shared.metrics import bridged_runtime
from shared.readiness import store_probe, temporal_probe
from shared.settings import Settings
from shared.temporal import TemporalHandle

# Calls in progress at stop get this long before they are cancelled.
SHUTDOWN_GRACE_SECONDS = 10
log = logging.getLogger("esteira.grpc")


@dataclass
class GrpcServer:
    """The server with every service registered, and its health servicer."""

    server: grpc.aio.Server
    health: health.aio.HealthServicer
    services: list[str]

    async def start(self) -> None:
        """Start serving and report every service SERVING."""
        await self.server.start()
        for name in ("", *self.services):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)


def build_server(settings: Settings, faces: Faces, api_key: str) -> GrpcServer:
    """System, pickup, signer and SISBAJUD services behind the API key, health and
    reflection on; each domain's servicer calls its face."""
    server = grpc.aio.server(interceptors=[ApiKeyInterceptor(api_key), DecodingInterceptor()])
    system = SystemServicer(settings, faces.signer.sessions)
    system_pb2_grpc.add_SystemServiceServicer_to_server(system, server)
    add_pickup(server, faces.pickup)
    services = [add_signer(server, faces.signer),
                add_sisbajud(server, faces.sisbajud, api_key),
                system_pb2.DESCRIPTOR.services_by_name["SystemService"].full_name,
                pickup_pb2.DESCRIPTOR.services_by_name["PickupService"].full_name]
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        [*services, health.SERVICE_NAME, reflection.SERVICE_NAME], server)
    return GrpcServer(server, health_servicer, services)


async def run_grpc(settings: Settings) -> None:
    """Serve the esteira services, gRPC health and reflection on `ESTEIRA_PORTS__GRPC`."""
    stop = stop_event()
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    address = f"{settings.host}:{settings.ports.grpc}"
    try:
        async with OpsServer(settings, "grpc") as ops, bridged_runtime() as runtime:
            temporal = TemporalHandle.for_settings(settings, runtime=runtime)
            ops.watch(store_probe(engine), temporal_probe(temporal))
            grpc_server = build_server(settings, compose(settings, sessions, temporal),
                                       resolve_api_key(settings))
            add_port(grpc_server.server, address, settings.grpc)
            await _serve(settings, sessions, grpc_server, address, stop, ops)
    finally:
        await engine.dispose()


async def _serve(settings: Settings, sessions: async_sessionmaker[AsyncSession],
                 grpc_server: GrpcServer, address: str, stop: asyncio.Event,
                 ops: OpsServer) -> None:
    """Serve until `stop`, then drain the calls in progress."""
    async with registered_instance(sessions, "grpc", settings.cluster):
        await grpc_server.start()
        ops.started()
        log.info("gRPC server listening on %s (%s)", address,
                 "TLS" if settings.grpc.tls else "plaintext")
        await stop.wait()
        await grpc_server.health.enter_graceful_shutdown()
        await grpc_server.server.stop(SHUTDOWN_GRACE_SECONDS)
