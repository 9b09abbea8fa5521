"""`esteira.v1.SystemService`."""

from __future__ import annotations

import grpc
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.models.pipeline import read_pipeline_state
from services.grpc_server.gen.esteira.v1 import system_pb2, system_pb2_grpc
from shared.settings import Settings
from shared.version import full_version


class SystemServicer(system_pb2_grpc.SystemServiceServicer):
    """Status of this deployment."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._settings = settings
        self._sessions = sessions

    async def GetStatus(self, request: system_pb2.GetStatusRequest,
                        context: grpc.aio.ServicerContext) -> system_pb2.GetStatusResponse:
        async with self._sessions() as session:
            state = await read_pipeline_state(session)
        return system_pb2.GetStatusResponse(
            version=full_version(), environment=self._settings.environment,
            pipeline_paused=state.paused, pause_reason=state.reason or "",
        )
