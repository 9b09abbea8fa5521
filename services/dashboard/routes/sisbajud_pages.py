"""The SISBAJUD console's lists: orders (and one order's timeline), alarms, orphan operations,
what is parked, the outbox, institutions; each filtered and paged on with its cursor."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from activities.sisbajud.contracts.orders import AlarmCode, OrderState, order_workflow_id
from services.app_context import SisbajudFace
from services.dashboard.web import next_page_url, render
from shared.errors import EsteiraError

router = APIRouter()
PAGE = 50
PARKED = "PARKED"
OUTBOX_STATES = ("PENDING", "PARKED", "SENT")
ORDER_STATES = [s.value for s in OrderState]


def _chosen(value: str | None, allowed: list[str] | tuple[str, ...]) -> str | None:
    return value if value in allowed else None


@router.get("/sisbajud/orders", response_class=HTMLResponse, include_in_schema=False)
async def orders_page(request: Request, sisbajud: SisbajudFace, state: str | None = None,
                      cursor: str | None = None) -> HTMLResponse:
    """Orders, most recently changed first, by state."""
    state = _chosen(state, ORDER_STATES)
    page = await sisbajud.views.orders(state, PAGE, cursor or None)
    return render(request, "sisbajud_orders.html", page=page, state=state or "",
                  states=ORDER_STATES, order_workflow_id=order_workflow_id,
                  next_url=next_page_url(request, "/sisbajud/orders", page.next_cursor))


@router.get("/sisbajud/orders/{order_id}", response_class=HTMLResponse,
            include_in_schema=False)
async def order_page(request: Request, sisbajud: SisbajudFace,
                     order_id: str) -> HTMLResponse:
    """One order: where it stands, its timeline, its workflow in the Temporal UI."""
    try:
        timeline = await sisbajud.timeline.order(order_id)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    return render(request, "sisbajud_order.html", timeline=timeline, order=timeline.order,
                  workflow_id=order_workflow_id(order_id))


@router.get("/sisbajud/alarms", response_class=HTMLResponse, include_in_schema=False)
async def alarms_page(request: Request, sisbajud: SisbajudFace, code: str | None = None,
                      cursor: str | None = None) -> HTMLResponse:
    """Alarms, newest first, by code; each not yet acknowledged carries the form."""
    codes = [c.value for c in AlarmCode]
    code = _chosen(code, codes)
    page = await sisbajud.views.alarms(code, PAGE, cursor or None)
    return render(request, "sisbajud_alarms.html", page=page, code=code or "", codes=codes,
                  next_url=next_page_url(request, "/sisbajud/alarms", page.next_cursor))


@router.get("/sisbajud/orphans", response_class=HTMLResponse, include_in_schema=False)
async def orphans_page(request: Request, sisbajud: SisbajudFace,
                       block_alias: str | None = None,
                       cursor: str | None = None) -> HTMLResponse:
    """Operations on block accounts this executor did not write, newest first."""
    alias = (block_alias or "").strip() or None
    page = await sisbajud.views.orphans(alias, PAGE, cursor or None)
    return render(request, "sisbajud_orphans.html", page=page, block_alias=alias or "",
                  next_url=next_page_url(request, "/sisbajud/orphans", page.next_cursor))


@router.get("/sisbajud/parked", response_class=HTMLResponse, include_in_schema=False)
async def parked_page(request: Request, sisbajud: SisbajudFace,
                      notices_cursor: str | None = None, results_cursor: str | None = None,
                      orders_cursor: str | None = None) -> HTMLResponse:
    """Parked notices, results and orders, each with its requeue form and its own cursor."""
    notices = await sisbajud.views.notices(PARKED, PAGE, notices_cursor or None)
    results = await sisbajud.views.outbox(PARKED, PAGE, results_cursor or None)
    orders = await sisbajud.views.orders(PARKED, PAGE, orders_cursor or None)
    return render(request, "sisbajud_parked.html", notices=notices, results=results,
                  orders=orders, order_workflow_id=order_workflow_id)


@router.get("/sisbajud/outbox", response_class=HTMLResponse, include_in_schema=False)
async def outbox_page(request: Request, sisbajud: SisbajudFace, state: str | None = None,
                      cursor: str | None = None) -> HTMLResponse:
    """What waits to be sent, what is parked, what went: depth, age, counts, the rows."""
    state = _chosen(state, OUTBOX_STATES)
    view = await sisbajud.views.outbox(state, PAGE, cursor or None)
    return render(request, "sisbajud_outbox.html", view=view, state=state or "",
                  states=OUTBOX_STATES,
                  next_url=next_page_url(request, "/sisbajud/outbox", view.next_cursor))


@router.get("/sisbajud/institutions", response_class=HTMLResponse, include_in_schema=False)
async def institutions_page(request: Request, sisbajud: SisbajudFace,
                            cursor: str | None = None) -> HTMLResponse:
    """Institutions with their owner, and each configured endpoint called now."""
    view = await sisbajud.views.institutions(PAGE, cursor or None)
    connections: dict[str, list] = {}
    for connection in await sisbajud.connections.report():
        connections.setdefault(connection.target.split(" ", 1)[0], []).append(connection)
    return render(request, "sisbajud_institutions.html", view=view, connections=connections,
                  next_url=next_page_url(request, "/sisbajud/institutions", view.next_cursor))
