"""`esteira.v1.SisbajudService` over a real channel: the REST operator actions, the same codes,
the actor from the call's credential (API key, or a dashboard account in `authorization`)."""

from __future__ import annotations

import base64

import grpc
import pytest

from activities.sisbajud.models import SisbajudAlarm, SisbajudHumanDecision, SisbajudOutbox
from services.dashboard.passwords import hash_password
from services.grpc_server.auth import ApiKeyInterceptor
from services.grpc_server.gen.esteira.v1 import sisbajud_pb2, sisbajud_pb2_grpc
from services.grpc_server.sisbajud import SisbajudServicer
from shared.settings import OperatorAccount
from tests.api.conftest import API_KEY
from tests.api.signer.test_grpc_signer import refused
from tests.support.sisbajud import new_order_id

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
KEY = [("x-api-key", API_KEY)]


def _as(name: str, password: str | None = None) -> list[tuple[str, str]]:
    pair = f"{name}:{password or name + '-password'}".encode()
    return [*KEY, ("authorization", "Basic " + base64.b64encode(pair).decode())]


async def test_requeue_acknowledge_and_two_people_over_grpc(api, settings):
    settings.dashboard.operators = [
        OperatorAccount(name=name, password_hash=hash_password(f"{name}-password"))
        for name in ("ana", "bruno")]
    order_id = new_order_id()
    parked = SisbajudOutbox(idempotency_key=f"{order_id}:1:1", order_id=order_id, revision=1,
                            payload={}, state="PARKED", attempts=1)
    alarm = SisbajudAlarm(code="result.rejected", message="refused")
    decision = SisbajudHumanDecision(order_id=order_id, revision=1,
                                     reason="ledger.write-indeterminate",
                                     disposition="HELD_MONEY_MOVED")
    async with api.context.sessions() as session:
        for row in (parked, alarm, decision):
            session.add(row)
        await session.commit()
        for row in (parked, alarm, decision):
            await session.refresh(row)
    server = grpc.aio.server(interceptors=[ApiKeyInterceptor(API_KEY)])
    sisbajud_pb2_grpc.add_SisbajudServiceServicer_to_server(
        SisbajudServicer(api.context.faces.sisbajud, API_KEY), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    why = "checked with the court clerk"
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = sisbajud_pb2_grpc.SisbajudServiceStub(channel)
            requeue = sisbajud_pb2.RequeueResultRequest(result_id=parked.id, reason=why)
            assert (await refused(stub.RequeueResult(requeue)))[0] == \
                grpc.StatusCode.UNAUTHENTICATED
            done = await stub.RequeueResult(requeue, metadata=KEY)
            assert (done.state, done.actor, done.idempotency_key) == (
                "PENDING", "api-key", f"{order_id}:1:1")
            assert await refused(stub.RequeueResult(requeue, metadata=KEY)) == (
                grpc.StatusCode.FAILED_PRECONDITION, "sisbajud.not-parked")
            assert await refused(stub.RequeueResult(sisbajud_pb2.RequeueResultRequest(
                result_id=parked.id), metadata=KEY)) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                         "request.invalid")
            ack = sisbajud_pb2.AcknowledgeAlarmRequest(alarm_id=alarm.id, reason=why)
            assert await refused(stub.AcknowledgeAlarm(ack, metadata=_as("ana", "x"))) == (
                grpc.StatusCode.UNAUTHENTICATED, "sisbajud.operator-invalid")
            assert (await stub.AcknowledgeAlarm(ack, metadata=_as("ana"))).actor == \
                "operator:ana"
            assert await refused(stub.AcknowledgeAlarm(ack, metadata=KEY)) == (
                grpc.StatusCode.FAILED_PRECONDITION, "sisbajud.already-acknowledged")
            resolve = sisbajud_pb2.ResolveDecisionRequest(
                decision_id=decision.id, reason=why, effect="FULL", reason_code="BLOCKED_TOTAL",
                executed_amount="30")
            # Held money resolved as moved names the ledger transaction that moved it.
            assert await refused(stub.ResolveDecision(resolve, metadata=_as("ana"))) == (
                grpc.StatusCode.INVALID_ARGUMENT, "request.invalid")
            resolve.transaction_id = "0190b000-0000-7000-8000-00000000beef"
            proposed = await stub.ResolveDecision(resolve, metadata=_as("ana"))
            assert (proposed.status, proposed.actor) == ("proposed", "operator:ana")
            assert await refused(stub.ResolveDecision(resolve, metadata=_as("ana"))) == (
                grpc.StatusCode.FAILED_PRECONDITION, "sisbajud.same-actor")
            # Bruno confirms; the order has no workflow here, so the update finds nobody.
            assert await refused(stub.ResolveDecision(resolve, metadata=_as("bruno"))) == (
                grpc.StatusCode.FAILED_PRECONDITION, "sisbajud.decision-not-open")
    finally:
        await server.stop(0)
