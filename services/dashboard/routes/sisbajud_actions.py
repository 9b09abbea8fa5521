"""The SISBAJUD console's actions: acknowledge an alarm or an orphan operation, requeue a
parked notice, result or order; the signed-in operator acts, with a reason, and a refusal
comes back as a message on the page the form came from."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse

from services.app_context import SisbajudFace
from services.dashboard.guard import CheckedForm
from services.dashboard.sisbajud_forms import action_of, back_to
from services.dashboard.web import redirect
from services.operator_credentials import ActorDep
from shared.errors import EsteiraError

router = APIRouter()


async def _act(request: Request, form: CheckedForm, default: str, done: str,
               call: Any) -> RedirectResponse:
    """Run `call(body)` with the form's reason; the notice says `done`, a refusal its code."""
    back = back_to(form, default)
    try:
        result: Awaitable[Any] = call(action_of(form))
        await result
    except EsteiraError as exc:
        return redirect(request, back, error=exc)
    return redirect(request, back, notice=done)


@router.post("/sisbajud/alarms/{alarm_id}/acknowledge", include_in_schema=False)
async def acknowledge_alarm(request: Request, alarm_id: int, form: CheckedForm,
                            sisbajud: SisbajudFace, actor: ActorDep) -> RedirectResponse:
    """An operator looked at the alarm: who (the session) and why."""
    return await _act(request, form, "/sisbajud/alarms",
                      f"Alarm {alarm_id} acknowledged by {actor}.",
                      lambda body: sisbajud.actions.acknowledge_alarm(alarm_id, body, actor))


@router.post("/sisbajud/orphans/{operation_id}/acknowledge", include_in_schema=False)
async def acknowledge_orphan(request: Request, operation_id: str, form: CheckedForm,
                             sisbajud: SisbajudFace, actor: ActorDep) -> RedirectResponse:
    """An operator looked at the foreign operation: who (the session) and why."""
    return await _act(request, form, "/sisbajud/orphans",
                      f"Orphan operation {operation_id} acknowledged by {actor}.",
                      lambda body: sisbajud.actions.acknowledge_orphan(operation_id, body,
                                                                       actor))


@router.post("/sisbajud/notices/{notice_id}/requeue", include_in_schema=False)
async def requeue_notice(request: Request, notice_id: int, form: CheckedForm,
                         sisbajud: SisbajudFace, actor: ActorDep) -> RedirectResponse:
    """A parked delivery back into ingestion at the next tick."""
    return await _act(request, form, "/sisbajud/parked",
                      f"Notice {notice_id} requeued by {actor}.",
                      lambda body: sisbajud.actions.requeue_notice(notice_id, body, actor))


@router.post("/sisbajud/results/{result_id}/requeue", include_in_schema=False)
async def requeue_result(request: Request, result_id: int, form: CheckedForm,
                         sisbajud: SisbajudFace, actor: ActorDep) -> RedirectResponse:
    """A parked result sent again, under its key, at the next tick."""
    return await _act(request, form, "/sisbajud/parked",
                      f"Result {result_id} requeued by {actor}.",
                      lambda body: sisbajud.actions.requeue_result(result_id, body, actor))


@router.post("/sisbajud/orders/{order_id}/requeue", include_in_schema=False)
async def requeue_order(request: Request, order_id: str, form: CheckedForm,
                        sisbajud: SisbajudFace, actor: ActorDep) -> RedirectResponse:
    """A parked order's revision executed again (its write keeps its key)."""
    return await _act(request, form, "/sisbajud/parked",
                      f"Order {order_id} requeued by {actor}.",
                      lambda body: sisbajud.actions.requeue_order(order_id, body, actor))
