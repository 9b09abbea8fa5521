"""REST of the SISBAJUD operator actions: requeue what was parked, acknowledge alarms and
orphans (each a face operation, the actor from the credential)."""

from __future__ import annotations

from fastapi import APIRouter

from activities.sisbajud.operator import ActionIn
from services.api.routes.sisbajud_wire import (
    SisbajudAcknowledgedOut,
    SisbajudNoticeRequeuedOut,
    SisbajudOrderRequeuedOut,
    SisbajudResultRequeuedOut,
)
from services.app_context import SisbajudFace
from services.operator_credentials import ActorDep

router = APIRouter(prefix="/api/sisbajud", tags=["sisbajud"])


@router.post("/notices/{notice_id}/requeue", status_code=202)
async def requeue_notice(notice_id: int, body: ActionIn, sisbajud: SisbajudFace,
                         actor: ActorDep) -> SisbajudNoticeRequeuedOut:
    """A parked delivery naming an order goes back to ingestion at the next tick."""
    done = await sisbajud.actions.requeue_notice(notice_id, body, actor)
    return SisbajudNoticeRequeuedOut.model_validate(done)


@router.post("/outbox/{result_id}/requeue", status_code=202)
async def requeue_result(result_id: int, body: ActionIn, sisbajud: SisbajudFace,
                         actor: ActorDep) -> SisbajudResultRequeuedOut:
    """A parked result is sent again, under the same key, at the next tick."""
    done = await sisbajud.actions.requeue_result(result_id, body, actor)
    return SisbajudResultRequeuedOut.model_validate(done)


@router.post("/orders/{order_id}/requeue", status_code=202)
async def requeue_order(order_id: str, body: ActionIn, sisbajud: SisbajudFace,
                        actor: ActorDep) -> SisbajudOrderRequeuedOut:
    """A parked order's revision is executed again from the next tick (same write key)."""
    done = await sisbajud.actions.requeue_order(order_id, body, actor)
    return SisbajudOrderRequeuedOut.model_validate(done)


@router.post("/alarms/{alarm_id}/acknowledgement")
async def acknowledge_alarm(alarm_id: int, body: ActionIn, sisbajud: SisbajudFace,
                            actor: ActorDep) -> SisbajudAcknowledgedOut:
    """An operator looked at the alarm: who (the credential) and why, once."""
    done = await sisbajud.actions.acknowledge_alarm(alarm_id, body, actor)
    return SisbajudAcknowledgedOut.model_validate(done)


@router.post("/orphans/{operation_id}/acknowledgement")
async def acknowledge_orphan(operation_id: str, body: ActionIn, sisbajud: SisbajudFace,
                             actor: ActorDep) -> SisbajudAcknowledgedOut:
    """An operator looked at the foreign operation: who (the credential) and why, once."""
    done = await sisbajud.actions.acknowledge_orphan(operation_id, body, actor)
    return SisbajudAcknowledgedOut.model_validate(done)
