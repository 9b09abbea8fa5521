"""`esteira.v1.SisbajudService`: the SISBAJUD operator actions, as REST has them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from activities.sisbajud import operator
from activities.sisbajud.operator import ActionIn, ResolutionIn
from services.grpc_server.gen.esteira.v1 import sisbajud_pb2, sisbajud_pb2_grpc
from services.grpc_server.refusal import refusals
from services.operator_credentials import API_KEY_ACTOR, basic_operator
from shared.errors import ErrorCode, EsteiraError
from shared.settings import Settings

AUTHORIZATION = "authorization"


def _why(reason: str) -> ActionIn:
    try:
        return ActionIn(reason=reason)
    except ValidationError as exc:
        raise EsteiraError(ErrorCode.REQUEST_INVALID, "a reason is required") from exc


def _reply(done: dict[str, Any]) -> sisbajud_pb2.ActionReply:
    return sisbajud_pb2.ActionReply(
        actor=done.get("actor") or done.get("acknowledgedBy") or "",
        state=done.get("state", ""), notice_id=done.get("noticeId") or 0,
        idempotency_key=done.get("idempotencyKey", ""))


class SisbajudServicer(sisbajud_pb2_grpc.SisbajudServiceServicer):
    """Thin: the actor from the call's credential, then the shared operator action."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession],
                 temporal: Callable[[], Awaitable[Client]], api_key: str) -> None:
        self._settings, self._sessions = settings, sessions
        self._temporal, self._api_key = temporal, api_key

    def _actor(self, context: grpc.aio.ServicerContext) -> str:
        header = dict(context.invocation_metadata() or ()).get(AUTHORIZATION)
        if header is None:
            return API_KEY_ACTOR
        return basic_operator(str(header), self._settings, self._api_key)

    @refusals
    async def RequeueNotice(self, request, context) -> sisbajud_pb2.ActionReply:
        return _reply(await operator.requeue_notice(
            self._sessions, request.notice_id, _why(request.reason), self._actor(context)))

    @refusals
    async def RequeueResult(self, request, context) -> sisbajud_pb2.ActionReply:
        return _reply(await operator.requeue_result(
            self._sessions, request.result_id, _why(request.reason), self._actor(context)))

    @refusals
    async def RequeueOrder(self, request, context) -> sisbajud_pb2.ActionReply:
        return _reply(await operator.requeue_order(
            self._sessions, request.order_id, _why(request.reason), self._actor(context)))

    @refusals
    async def AcknowledgeAlarm(self, request, context) -> sisbajud_pb2.ActionReply:
        return _reply(await operator.acknowledge_alarm(
            self._sessions, request.alarm_id, _why(request.reason), self._actor(context)))

    @refusals
    async def AcknowledgeOrphan(self, request, context) -> sisbajud_pb2.ActionReply:
        return _reply(await operator.acknowledge_orphan(
            self._sessions, request.operation_id, _why(request.reason), self._actor(context)))

    @refusals
    async def ResolveDecision(self, request, context) -> sisbajud_pb2.ResolveDecisionReply:
        actor = self._actor(context)
        try:
            body = ResolutionIn(reason=request.reason, effect=request.effect,
                                reasonCode=request.reason_code or None,
                                executedAmount=request.executed_amount or None,
                                transactionId=request.transaction_id or None)
        except ValidationError as exc:
            raise EsteiraError(ErrorCode.REQUEST_INVALID, "; ".join(
                f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from exc
        done = await operator.resolve_decision(self._sessions, self._temporal,
                                               request.decision_id, body, actor)
        return sisbajud_pb2.ResolveDecisionReply(
            status=done["status"], order_id=done["orderId"], revision=done["revision"],
            result_key=done.get("resultKey", ""),
            actor=done.get("resolvedBy") or done.get("proposedBy", ""))


def add_sisbajud(server: grpc.aio.Server, settings: Settings,
                 sessions: async_sessionmaker[AsyncSession],
                 temporal: Callable[[], Awaitable[Client]], api_key: str) -> str:
    """Register the service; returns its full name (for health and reflection)."""
    sisbajud_pb2_grpc.add_SisbajudServiceServicer_to_server(
        SisbajudServicer(settings, sessions, temporal, api_key), server)
    return sisbajud_pb2.DESCRIPTOR.services_by_name["SisbajudService"].full_name
