"""SISBAJUD: orders, parked deliveries and the decisions waiting for a person, with resolve."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError

from activities.sisbajud.contracts.orders import Effect, ReasonCode, order_workflow_id
from activities.sisbajud.operator import ResolutionIn
from services.app_context import SisbajudFace
from services.dashboard.guard import CheckedForm
from services.dashboard.web import redirect, render
from services.operator_credentials import ActorDep
from shared.errors import ErrorCode, EsteiraError

router = APIRouter()
EFFECTS = [e.value for e in Effect if e is not Effect.INDETERMINATE]
PAGE = 100
PARKED = "PARKED"
FORM_FIELDS = ("effect", "reason", "reasonCode", "executedAmount", "transactionId")


@router.get("/sisbajud", response_class=HTMLResponse, include_in_schema=False)
async def sisbajud_page(request: Request, sisbajud: SisbajudFace,
                        decisions_cursor: str | None = None, orders_cursor: str | None = None,
                        parked_cursor: str | None = None) -> HTMLResponse:
    """Open decisions first, then the orders and the parked deliveries; each list pages on
    with its own cursor (the API's)."""
    parked = await sisbajud.views.notices(PARKED, PAGE, parked_cursor)
    return render(request, "sisbajud.html",
                  decisions=await sisbajud.decisions.list(None, PAGE, decisions_cursor),
                  orders=await sisbajud.views.orders(None, PAGE, orders_cursor),
                  parked=parked, parked_rows=[n.model_dump() for n in parked.items],
                  effects=EFFECTS, reason_codes=[c.value for c in ReasonCode],
                  order_workflow_id=order_workflow_id)


@router.post("/sisbajud/decisions/{decision_id}/resolve", include_in_schema=False)
async def resolve(request: Request, decision_id: int, form: CheckedForm,
                  sisbajud: SisbajudFace, actor: ActorDep) -> RedirectResponse:
    """The face's resolution, with the signed-in operator as the actor."""
    values = {key: str(form.get(key) or "").strip() or None for key in FORM_FIELDS}
    try:
        body = ResolutionIn.model_validate({k: v for k, v in values.items() if v is not None})
        done = await sisbajud.decisions.resolve(decision_id, body, actor)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                             for e in exc.errors())
        return redirect(request, "/sisbajud",
                        error=EsteiraError(ErrorCode.REQUEST_INVALID, problems))
    except EsteiraError as exc:
        return redirect(request, "/sisbajud", error=exc)
    return redirect(request, "/sisbajud", notice=(f"Decision {decision_id} {done.status}: "
                                                  f"order {done.order_id} r{done.revision}."))
