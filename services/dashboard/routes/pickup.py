"""Pickup: the schools, and a live board per school fed by the board's event stream."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, StreamingResponse

from activities.pickup.operator import admin
from services.api.routes.pickup import board as rest_board
from services.api.routes.pickup import events as rest_events
from services.dashboard.web import context, render
from shared.errors import EsteiraError

router = APIRouter()


@router.get("/pickup", response_class=HTMLResponse, include_in_schema=False)
async def schools_page(request: Request) -> HTMLResponse:
    """Every school, each linking to its board."""
    schools = await admin.list_schools(context(request).sessions)
    return render(request, "pickup.html", schools=schools)


@router.get("/pickup/{school_id}", response_class=HTMLResponse, include_in_schema=False)
async def board_page(request: Request, school_id: int) -> HTMLResponse:
    """The school's board; the page subscribes to `/pickup/{id}/events`."""
    try:
        board = await rest_board.board(school_id, context(request).sessions)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    return render(request, "pickup_board.html", board=board)


@router.get("/pickup/{school_id}/events", include_in_schema=False)
async def board_events(request: Request, school_id: int) -> StreamingResponse:
    """The REST SSE stream, reachable with the operator's cookie (EventSource sends no
    headers, so it can't carry the API key)."""
    ctx = context(request)
    return await rest_events.board_events(
        school_id, request, ctx.sessions, ctx.settings.pickup,
        last_event_id=request.headers.get("Last-Event-ID"), after=None)
