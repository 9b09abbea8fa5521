"""SISBAJUD: the overview (the day's chart, decisions waiting for people, orders, parked
deliveries) and the two-person resolution of a decision by the signed-in operators."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic import ValidationError

from activities.sisbajud.contracts.orders import Effect, ReasonCode, order_workflow_id
from activities.sisbajud.operator import ResolutionIn
from services.app_context import SisbajudFace
from services.dashboard.guard import CheckedForm
from services.dashboard.sisbajud_charts import states_chart
from services.dashboard.sisbajud_forms import back_to, invalid
from services.dashboard.web import redirect, render
from services.operator_credentials import ActorDep
from shared.errors import EsteiraError

router = APIRouter()
EFFECTS = [e.value for e in Effect if e is not Effect.INDETERMINATE]
PAGE = 100
PARKED = "PARKED"
FORM_FIELDS = ("effect", "reason", "reasonCode", "executedAmount", "transactionId")
# `?decisions=open|resolved` narrows the decisions; anything else lists them all.
DECISION_FILTERS = {"open": True, "resolved": False}


@router.get("/sisbajud", response_class=HTMLResponse, include_in_schema=False)
async def sisbajud_page(request: Request, sisbajud: SisbajudFace,
                        decisions: str | None = None, decisions_cursor: str | None = None,
                        orders_cursor: str | None = None,
                        parked_cursor: str | None = None) -> HTMLResponse:
    """The day's chart, then decisions (open ones carry the resolution form), orders and
    parked deliveries; each list pages on with its own cursor (the API's)."""
    parked = await sisbajud.views.notices(PARKED, PAGE, parked_cursor)
    chosen = DECISION_FILTERS.get(decisions or "")
    return render(request, "sisbajud.html",
                  chart=await states_chart(sisbajud),
                  decisions=await sisbajud.decisions.list(chosen, PAGE, decisions_cursor),
                  decision_filter=decisions if chosen is not None else "",
                  orders=await sisbajud.views.orders(None, PAGE, orders_cursor),
                  parked=parked, parked_rows=[n.model_dump() for n in parked.items],
                  effects=EFFECTS, reason_codes=[c.value for c in ReasonCode],
                  order_workflow_id=order_workflow_id)


@router.post("/sisbajud/decisions/{decision_id}/resolve", include_in_schema=False)
async def resolve(request: Request, decision_id: int, form: CheckedForm,
                  sisbajud: SisbajudFace, actor: ActorDep) -> RedirectResponse:
    """The face's resolution with the signed-in operator as the actor: a resolution that
    moves money is proposed by one and confirmed by another; every refusal (same person,
    a confirmation that differs, a decision no longer open) comes back as a message."""
    back = back_to(form, "/sisbajud")
    values = {key: str(form.get(key) or "").strip() or None for key in FORM_FIELDS}
    try:
        body = ResolutionIn.model_validate({k: v for k, v in values.items() if v is not None})
        done = await sisbajud.decisions.resolve(decision_id, body, actor)
    except ValidationError as exc:
        return redirect(request, back, error=invalid(exc))
    except EsteiraError as exc:
        return redirect(request, back, error=exc)
    if done.status == "proposed":
        return redirect(request, back, notice=(
            f"Decision {decision_id} proposed by {done.proposed_by}: order {done.order_id} "
            f"r{done.revision} waits for a second operator to confirm it."))
    return redirect(request, back, notice=(f"Decision {decision_id} resolved by "
                                           f"{done.resolved_by}: order {done.order_id} "
                                           f"r{done.revision}."))
