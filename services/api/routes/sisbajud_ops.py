"""REST of the SISBAJUD operator actions: requeue what was parked, acknowledge alarms and
orphans (the actions themselves live in `activities.sisbajud.operator`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from activities.sisbajud import operator
from activities.sisbajud.operator import ActionIn
from services.api.routes.sisbajud_actor import ActorDep
from services.app_context import ContextDep

router = APIRouter(prefix="/api/sisbajud", tags=["sisbajud"])


@router.post("/notices/{notice_id}/requeue", status_code=202)
async def requeue_notice(notice_id: int, body: ActionIn, ctx: ContextDep,
                         actor: ActorDep) -> dict[str, Any]:
    """A parked delivery naming an order goes back to ingestion at the next tick."""
    return await operator.requeue_notice(ctx.sessions, notice_id, body, actor)


@router.post("/outbox/{result_id}/requeue", status_code=202)
async def requeue_result(result_id: int, body: ActionIn, ctx: ContextDep,
                         actor: ActorDep) -> dict[str, Any]:
    """A parked result is sent again, under the same key, at the next tick."""
    return await operator.requeue_result(ctx.sessions, result_id, body, actor)


@router.post("/orders/{order_id}/requeue", status_code=202)
async def requeue_order(order_id: str, body: ActionIn, ctx: ContextDep,
                        actor: ActorDep) -> dict[str, Any]:
    """A parked order's revision is executed again from the next tick (same write key)."""
    return await operator.requeue_order(ctx.sessions, order_id, body, actor)


@router.post("/alarms/{alarm_id}/acknowledgement")
async def acknowledge_alarm(alarm_id: int, body: ActionIn, ctx: ContextDep,
                            actor: ActorDep) -> dict[str, Any]:
    """An operator looked at the alarm: who (the credential) and why, once."""
    return await operator.acknowledge_alarm(ctx.sessions, alarm_id, body, actor)


@router.post("/orphans/{operation_id}/acknowledgement")
async def acknowledge_orphan(operation_id: str, body: ActionIn, ctx: ContextDep,
                             actor: ActorDep) -> dict[str, Any]:
    """An operator looked at the foreign operation: who (the credential) and why, once."""
    return await operator.acknowledge_orphan(ctx.sessions, operation_id, body, actor)
