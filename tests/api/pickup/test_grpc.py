"""`esteira.v1.PickupService` over a real gRPC channel, behind the API key interceptor."""

from __future__ import annotations

from datetime import timedelta

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from services.grpc_server.auth import ApiKeyInterceptor
from services.grpc_server.gen.esteira.v1 import pickup_pb2, pickup_pb2_grpc
from services.grpc_server.pickup import PickupServicer
from shared.db.models import utcnow
from tests.support.pickup import API_KEY, RecordingKicker, recording_face


def _error_info(error: grpc.aio.AioRpcError) -> tuple[str, str]:
    """The stable code and HTTP status a refusal carries in its google.rpc.Status."""
    status = rpc_status.from_call(error)
    assert status is not None, "no google.rpc.Status in the trailers"
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info) and info.domain == "esteira"
    return info.reason, info.metadata["httpStatus"]


async def test_board_confirm_and_ledger_summary(pickup_api):
    seed = pickup_api.seed
    school = await seed.school()
    student = await seed.ready_student(school, at=utcnow() - timedelta(minutes=1))
    kicker = RecordingKicker()
    server = grpc.aio.server(interceptors=[ApiKeyInterceptor(API_KEY)])
    face = recording_face(pickup_api.context.settings, seed.sessions, kicker)
    pickup_pb2_grpc.add_PickupServiceServicer_to_server(PickupServicer(face), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    key = [("x-api-key", API_KEY)]
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pickup_pb2_grpc.PickupServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.GetBoard(pickup_pb2.GetBoardRequest(school_id=school.id))
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED

            board = await stub.GetBoard(pickup_pb2.GetBoardRequest(school_id=school.id),
                                        metadata=key)
            assert [(s.state, s.version) for s in board.students] == [("READY", 2)]
            with pytest.raises(grpc.aio.AioRpcError) as stale:
                await stub.ConfirmPickup(pickup_pb2.ConfirmPickupRequest(
                    student_id=student.id, version=1), metadata=key)
            # A stale version is ABORTED in every service, with the code in an ErrorInfo.
            assert stale.value.code() == grpc.StatusCode.ABORTED
            assert "pickup.version-conflict" in stale.value.details()
            assert _error_info(stale.value) == ("pickup.version-conflict", "409")
            done = await stub.ConfirmPickup(pickup_pb2.ConfirmPickupRequest(
                student_id=student.id, version=2), metadata=key)
            assert (done.state, done.version) == ("PICKED_UP", 3)
            summary = await stub.GetLedgerSummary(pickup_pb2.GetLedgerSummaryRequest(),
                                                  metadata=key)
            assert (summary.pending, summary.failed) == (2, 0)
    finally:
        await server.stop(0)
    assert kicker.controllers == [school.id]
