"""`esteira.v1.SisbajudService`: the SISBAJUD operator actions, as REST has them."""

from __future__ import annotations

import grpc
from pydantic import ValidationError

from activities.sisbajud.operator import (
    Acknowledged,
    ActionIn,
    NoticeRequeued,
    OrderRequeued,
    Proposed,
    ResolutionIn,
    ResultRequeued,
    SisbajudOperations,
)
from services.grpc_server.gen.esteira.v1 import sisbajud_pb2, sisbajud_pb2_grpc
from services.grpc_server.refusal import refusals
from services.operator_credentials import API_KEY_ACTOR, basic_operator
from shared.errors import ErrorCode, EsteiraError

AUTHORIZATION = "authorization"


def _why(reason: str) -> ActionIn:
    try:
        return ActionIn(reason=reason)
    except ValidationError as exc:
        raise EsteiraError(ErrorCode.REQUEST_INVALID, "a reason is required") from exc


def _reply(done: NoticeRequeued | ResultRequeued | OrderRequeued | Acknowledged
           ) -> sisbajud_pb2.ActionReply:
    if isinstance(done, Acknowledged):
        return sisbajud_pb2.ActionReply(actor=done.acknowledged_by)
    if isinstance(done, NoticeRequeued):
        return sisbajud_pb2.ActionReply(actor=done.actor, state=done.state,
                                        notice_id=done.notice_id)
    if isinstance(done, ResultRequeued):
        return sisbajud_pb2.ActionReply(actor=done.actor, state=done.state,
                                        idempotency_key=done.idempotency_key)
    return sisbajud_pb2.ActionReply(actor=done.actor, notice_id=done.notice_id)


class SisbajudServicer(sisbajud_pb2_grpc.SisbajudServiceServicer):
    """Thin: the actor from the call's credential, then the face's operation."""

    def __init__(self, sisbajud: SisbajudOperations, api_key: str) -> None:
        self._sisbajud, self._api_key = sisbajud, api_key

    def _actor(self, context: grpc.aio.ServicerContext) -> str:
        header = dict(context.invocation_metadata() or ()).get(AUTHORIZATION)
        if header is None:
            return API_KEY_ACTOR
        return basic_operator(str(header), self._sisbajud.settings, self._api_key)

    @refusals
    async def RequeueNotice(self, request, context) -> sisbajud_pb2.ActionReply:
        return _reply(await self._sisbajud.actions.requeue_notice(
            request.notice_id, _why(request.reason), self._actor(context)))

    @refusals
    async def RequeueResult(self, request, context) -> sisbajud_pb2.ActionReply:
        return _reply(await self._sisbajud.actions.requeue_result(
            request.result_id, _why(request.reason), self._actor(context)))

    @refusals
    async def RequeueOrder(self, request, context) -> sisbajud_pb2.ActionReply:
        return _reply(await self._sisbajud.actions.requeue_order(
            request.order_id, _why(request.reason), self._actor(context)))

    @refusals
    async def AcknowledgeAlarm(self, request, context) -> sisbajud_pb2.ActionReply:
        return _reply(await self._sisbajud.actions.acknowledge_alarm(
            request.alarm_id, _why(request.reason), self._actor(context)))

    @refusals
    async def AcknowledgeOrphan(self, request, context) -> sisbajud_pb2.ActionReply:
        return _reply(await self._sisbajud.actions.acknowledge_orphan(
            request.operation_id, _why(request.reason), self._actor(context)))

    @refusals
    async def ResolveDecision(self, request, context) -> sisbajud_pb2.ResolveDecisionReply:
        actor = self._actor(context)
        try:
            body = ResolutionIn(reason=request.reason, effect=request.effect,
                                reason_code=request.reason_code or None,
                                executed_amount=request.executed_amount or None,
                                transaction_id=request.transaction_id or None)
        except ValidationError as exc:
            raise EsteiraError(ErrorCode.REQUEST_INVALID, "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from exc
        done = await self._sisbajud.decisions.resolve(request.decision_id, body, actor)
        if isinstance(done, Proposed):
            return sisbajud_pb2.ResolveDecisionReply(
                status=done.status, order_id=done.order_id, revision=done.revision,
                actor=done.proposed_by)
        return sisbajud_pb2.ResolveDecisionReply(
            status=done.status, order_id=done.order_id, revision=done.revision,
            result_key=done.result_key, actor=done.resolved_by)


def add_sisbajud(server: grpc.aio.Server, sisbajud: SisbajudOperations, api_key: str) -> str:
    """Register the service; returns its full name (for health and reflection)."""
    sisbajud_pb2_grpc.add_SisbajudServiceServicer_to_server(
        SisbajudServicer(sisbajud, api_key), server)
    return sisbajud_pb2.DESCRIPTOR.services_by_name["SisbajudService"].full_name
