"""Events: the operational trail, newest first, by type, date range and text."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from activities.signer.operator import EventFilter
from services.app_context import SignerFace
from services.dashboard.web import next_page_url, render

router = APIRouter()
PAGE_SIZE = 200


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
async def events_page(request: Request, signer: SignerFace) -> HTMLResponse:
    """Filtered, a page at a time; the type list comes from the trail itself."""
    query = request.query_params
    types = [t for t in query.getlist("type") if t]
    page = await signer.events.page(
        EventFilter(types=types, created_from=_day(query.get("from")),
                    created_to=_day(query.get("to"), end=True),
                    text=query.get("text") or None),
        limit=PAGE_SIZE, cursor=query.get("cursor") or None)
    return render(request, "events.html", events=page.items,
                  known_types=await signer.events.known_types(),
                  next_url=next_page_url(request, "/events", page.next_cursor),
                  filters={"type": types, "from": query.get("from") or "",
                           "to": query.get("to") or "", "text": query.get("text") or ""})
