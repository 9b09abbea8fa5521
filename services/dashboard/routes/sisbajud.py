"""SISBAJUD: orders, parked deliveries and the decisions waiting for a person, with resolve."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError

from activities.sisbajud import operator
from activities.sisbajud.operator import views
from services.api.routes.sisbajud_actor import credential_actor
from services.app_context import ContextDep
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.web import redirect, render
from shared.contracts.sisbajud import Effect, ReasonCode, order_workflow_id
from shared.errors import ErrorCode, EsteiraError

router = APIRouter()
EFFECTS = [e.value for e in Effect if e is not Effect.INDETERMINATE]


@router.get("/sisbajud", response_class=HTMLResponse, include_in_schema=False)
async def sisbajud_page(request: Request, ctx: ContextDep) -> HTMLResponse:
    """Open decisions first, then the orders and the parked deliveries."""
    return render(request, "sisbajud.html",
                  orders=(await views.list_orders(ctx.sessions, None, 100, 0))["items"],
                  parked=(await views.list_notices(ctx.sessions, "PARKED", 100))["items"],
                  decisions=(await operator.list_decisions(ctx.sessions, None, 100))["items"],
                  effects=EFFECTS, reason_codes=[c.value for c in ReasonCode],
                  order_workflow_id=order_workflow_id)


@router.post("/sisbajud/decisions/{decision_id}/resolve", include_in_schema=False)
async def resolve(request: Request, decision_id: int, form: CheckedForm,
                  ctx: ContextDep) -> RedirectResponse:
    """The REST resolution handler, with the signed-in operator as the actor."""
    values = {key: str(form.get(key) or "").strip() or None
              for key in ("effect", "reason", "reasonCode", "executedAmount", "transactionId")}
    try:
        body = operator.ResolutionIn(actor=actor(request),
                                     **{k: v for k, v in values.items() if v is not None})
        done = await operator.resolve_decision(ctx.sessions, ctx.temporal, decision_id, body,
                                               credential_actor(request, ctx))
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                             for e in exc.errors())
        return redirect(request, "/sisbajud",
                        error=EsteiraError(ErrorCode.REQUEST_INVALID, problems))
    except EsteiraError as exc:
        return redirect(request, "/sisbajud", error=exc)
    return redirect(request, "/sisbajud", notice=(f"Decision {decision_id} {done['status']}: order "
                                         f"{done['orderId']} r{done['revision']}."))
