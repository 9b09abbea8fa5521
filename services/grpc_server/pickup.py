"""`esteira.v1.PickupService`: the board, operator pickup confirmation, the ledger backlog."""

from __future__ import annotations

import grpc
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from activities.pickup.board import confirm_pickup
from activities.pickup.kick import Kicker
from activities.pickup.sweeps import queue_backlog
from services.grpc_server.gen.esteira.v1 import pickup_pb2, pickup_pb2_grpc
from shared.contracts.pickup import PickupErrorCode
from shared.db.models import as_utc, utcnow
from shared.db.pickup_models import LedgerEntry, Student
from shared.errors import ErrorCode, EsteiraError
from shared.settings import Settings
from shared.temporal import connect

# REST status codes of the pickup errors, in gRPC terms.
GRPC_STATUS = {
    ErrorCode.NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    PickupErrorCode.VERSION_CONFLICT: grpc.StatusCode.ABORTED,
    PickupErrorCode.INVALID_TRANSITION: grpc.StatusCode.FAILED_PRECONDITION,
}


def _student(student: Student) -> pickup_pb2.StudentState:
    return pickup_pb2.StudentState(
        id=student.id, school_id=student.school_id, name=student.name, state=student.state,
        version=student.version, reason=student.state_reason or "",
        state_since=as_utc(student.state_since).isoformat())


class PickupServicer(pickup_pb2_grpc.PickupServiceServicer):
    """Thin: decode, call the pickup operations, map error codes to gRPC status."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], kicker: Kicker) -> None:
        self._sessions = sessions
        self._kicker = kicker

    async def GetBoard(self, request: pickup_pb2.GetBoardRequest,
                       context: grpc.aio.ServicerContext) -> pickup_pb2.GetBoardResponse:
        async with self._sessions() as session:
            students = (await session.exec(select(Student).where(
                Student.school_id == request.school_id).order_by(Student.id))).all()
        return pickup_pb2.GetBoardResponse(students=[_student(s) for s in students])

    async def ConfirmPickup(self, request: pickup_pb2.ConfirmPickupRequest,
                            context: grpc.aio.ServicerContext) -> pickup_pb2.StudentState:
        try:
            async with self._sessions() as session, session.begin():
                change = await confirm_pickup(session, student_id=request.student_id,
                                              version=request.version, at=utcnow(),
                                              actor="grpc", origin="operator")
        except EsteiraError as exc:
            status = GRPC_STATUS.get(exc.code, grpc.StatusCode.INVALID_ARGUMENT)
            await context.abort(status, f"{exc.code}: {exc.message}")
        await self._kicker.drains(change.controllers)
        return _student(change.student)

    async def GetLedgerSummary(self, request: pickup_pb2.GetLedgerSummaryRequest,
                               context: grpc.aio.ServicerContext) -> pickup_pb2.LedgerSummary:
        async with self._sessions() as session:
            pending, failed, oldest = await queue_backlog(session, LedgerEntry)
        age = (utcnow() - as_utc(oldest)).total_seconds() if oldest else 0.0
        return pickup_pb2.LedgerSummary(pending=pending, failed=failed,
                                        oldest_pending_seconds=age)


def add_pickup(server: grpc.aio.Server, settings: Settings,
               sessions: async_sessionmaker[AsyncSession]) -> None:
    """Register the pickup service; Temporal is connected on the first call that needs it."""
    client: list[Client] = []

    async def temporal() -> Client:
        if not client:
            client.append(await connect(settings))
        return client[0]

    pickup_pb2_grpc.add_PickupServiceServicer_to_server(
        PickupServicer(sessions, Kicker(settings.pickup, temporal)), server)
