"""`esteira.v1.PickupService`: the board, operator pickup confirmation, the ledger backlog."""

from __future__ import annotations

import grpc

from activities.pickup.models import Student
from activities.pickup.operator import PickupOperations
from services.grpc_server.gen.esteira.v1 import pickup_pb2, pickup_pb2_grpc
from services.grpc_server.refusal import refusals
from shared.db.models import as_utc


def _student(student: Student) -> pickup_pb2.StudentState:
    return pickup_pb2.StudentState(
        id=student.id, school_id=student.school_id, name=student.name, state=student.state,
        version=student.version, reason=student.state_reason or "",
        state_since=as_utc(student.state_since).isoformat())


class PickupServicer(pickup_pb2_grpc.PickupServiceServicer):
    """Thin: decode, call the pickup face; refusals per the pickup error table."""

    def __init__(self, pickup: PickupOperations) -> None:
        self._pickup = pickup

    async def GetBoard(self, request: pickup_pb2.GetBoardRequest,
                       context: grpc.aio.ServicerContext) -> pickup_pb2.GetBoardResponse:
        students = await self._pickup.board.students_of_school(request.school_id)
        return pickup_pb2.GetBoardResponse(students=[_student(s) for s in students])

    @refusals
    async def ConfirmPickup(self, request: pickup_pb2.ConfirmPickupRequest,
                            context: grpc.aio.ServicerContext) -> pickup_pb2.StudentState:
        student = await self._pickup.board.confirm_pickup(
            student_id=request.student_id, version=request.version, actor="grpc")
        return _student(student)

    async def GetLedgerSummary(self, request: pickup_pb2.GetLedgerSummaryRequest,
                               context: grpc.aio.ServicerContext) -> pickup_pb2.LedgerSummary:
        backlog = await self._pickup.ledger.backlog()
        return pickup_pb2.LedgerSummary(pending=backlog.pending, failed=backlog.failed,
                                        oldest_pending_seconds=backlog.oldest_pending_seconds)


def add_pickup(server: grpc.aio.Server, pickup: PickupOperations) -> None:
    """Register the pickup service around the process's pickup face."""
    pickup_pb2_grpc.add_PickupServiceServicer_to_server(PickupServicer(pickup), server)
