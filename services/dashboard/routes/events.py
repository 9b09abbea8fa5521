"""Events: the operational trail, newest first, by type, date range and text."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from activities.signer.operator import events as signer_events
from services.api.routes import signer as rest
from services.dashboard.web import context, render

router = APIRouter()


def _day(text: str | None, *, end: bool = False) -> datetime | None:
    """A `YYYY-MM-DD` from a date input as UTC midnight (the day after, for an end)."""
    try:
        day = date.fromisoformat(text) if text else None
    except ValueError:
        return None
    if day is None:
        return None
    return datetime.combine(day + timedelta(days=1 if end else 0), time(), tzinfo=UTC)


@router.get("/events", response_class=HTMLResponse, include_in_schema=False)
async def events_page(request: Request) -> HTMLResponse:
    """Filtered through the REST handler; the type list comes from the trail itself."""
    query = request.query_params
    types = [t for t in query.getlist("type") if t]
    events = await rest.list_events(context(request), type=types or None,
                                    created_from=_day(query.get("from")),
                                    created_to=_day(query.get("to"), end=True),
                                    text=query.get("text") or None, limit=200)
    known = await signer_events.known_types(context(request).sessions)
    return render(request, "events.html", events=events, known_types=known,
                  filters={"type": types, "from": query.get("from") or "",
                           "to": query.get("to") or "", "text": query.get("text") or ""})
