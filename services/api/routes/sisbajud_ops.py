"""REST of the SISBAJUD operator actions: requeue what was parked, acknowledge alarms and
orphans (the actions themselves live in `activities.sisbajud.operator`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from activities.sisbajud import operator
from activities.sisbajud.operator import ActionIn
from services.api.routes.sisbajud_actor import credential_actor

router = APIRouter(prefix="/api/sisbajud", tags=["sisbajud"])


@router.post("/notices/{notice_id}/requeue", status_code=202)
async def requeue_notice(notice_id: int, body: ActionIn, request: Request) -> dict[str, Any]:
    """A parked delivery naming an order goes back to ingestion at the next tick."""
    return await operator.requeue_notice(request.app.state.context.sessions, notice_id, body,
                                         credential_actor(request))


@router.post("/outbox/{result_id}/requeue", status_code=202)
async def requeue_result(result_id: int, body: ActionIn, request: Request) -> dict[str, Any]:
    """A parked result is sent again, under the same key, at the next tick."""
    return await operator.requeue_result(request.app.state.context.sessions, result_id, body,
                                         credential_actor(request))


@router.post("/orders/{order_id}/requeue", status_code=202)
async def requeue_order(order_id: str, body: ActionIn, request: Request) -> dict[str, Any]:
    """A parked order's revision is executed again from the next tick (same write key)."""
    return await operator.requeue_order(request.app.state.context.sessions, order_id, body,
                                        credential_actor(request))


@router.post("/alarms/{alarm_id}/acknowledgement")
async def acknowledge_alarm(alarm_id: int, body: ActionIn, request: Request) -> dict[str, Any]:
    """An operator looked at the alarm: who (the credential) and why, once."""
    return await operator.acknowledge_alarm(request.app.state.context.sessions, alarm_id, body,
                                            credential_actor(request))


@router.post("/orphans/{operation_id}/acknowledgement")
async def acknowledge_orphan(operation_id: str, body: ActionIn,
                             request: Request) -> dict[str, Any]:
    """An operator looked at the foreign operation: who (the credential) and why, once."""
    return await operator.acknowledge_orphan(request.app.state.context.sessions, operation_id,
                                             body, credential_actor(request))
