"""Server-Sent Events from the broadcast table, with `Last-Event-ID` catch-up."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse

from activities.pickup.operator import admin, events
from services.api.routes.pickup.deps import GuardianId, Pickup, Sessions
from shared.db.pickup_models import BoardEvent

router = APIRouter()
BATCH = 500
# Browsers wait this long (ms) before reconnecting, then send Last-Event-ID.
RETRY_MS = 2000


def _frame(event: BoardEvent) -> str:
    data = json.dumps({**event.payload, "type": event.type, "school_id": event.school_id,
                       "at": event.at.isoformat()}, ensure_ascii=False)
    return f"id: {event.id}\nevent: {event.type}\ndata: {data}\n\n"


async def _stream(request: Request, sessions, pickup, where: events.Filter,
                  last_id: int | None) -> AsyncIterator[str]:
    """Events after `last_id` (after the newest one if None), then live ones by polling."""
    if last_id is None:
        last_id = await events.newest_event_id(sessions)
    yield f"retry: {RETRY_MS}\n\n"
    quiet = 0.0
    while not await request.is_disconnected():
        rows = await events.events_after(sessions, last_id, where, BATCH)
        for row in rows:
            last_id = row.id
            yield _frame(row)
        if len(rows) == BATCH:
            continue
        if not rows:
            # Polling the table works across processes and both stores; events are ids only.
            await asyncio.sleep(pickup.sse_poll_seconds)
            quiet += pickup.sse_poll_seconds
            if quiet >= pickup.sse_keepalive_seconds:
                quiet = 0.0
                yield ": keepalive\n\n"


def _response(stream: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(stream, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _last(header: str | None, query: int | None) -> int | None:
    if header and header.strip().isdigit():
        return int(header.strip())
    return query


LastEventId = Annotated[str | None, Header(alias="Last-Event-ID")]


@router.get("/schools/{school_id}/board/events")
async def board_events(school_id: int, request: Request, sessions: Sessions, pickup: Pickup,
                       last_event_id: LastEventId = None,
                       after: int | None = None) -> StreamingResponse:
    """The school board's live feed: `StudentStateChanged` and `StudentRosterChanged`."""
    await admin.get_school(sessions, school_id)
    return _response(_stream(request, sessions, pickup, events.school_feed(school_id),
                             _last(last_event_id, after)))


@router.get("/guardian/events")
async def guardian_events(guardian_id: GuardianId, request: Request, sessions: Sessions,
                          pickup: Pickup, last_event_id: LastEventId = None,
                          after: int | None = None) -> StreamingResponse:
    """A guardian's feed: their students' state changes and their own roster changes."""
    return _response(_stream(request, sessions, pickup,
                             events.guardian_feed(sessions, guardian_id),
                             _last(last_event_id, after)))
