"""Server-Sent Events from the broadcast table, with `Last-Event-ID` catch-up."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse

from activities.pickup.models import BoardEvent
from activities.pickup.operator import admin, events
from services.api.event_stream import EVENT_STREAM, EventStreamResponse
from services.api.pickup_stream import StreamHub, StreamHubDep, stream_hub
from services.api.routes.pickup.deps import GuardianId, Pickup, Sessions

router = APIRouter()
# Browsers wait this long (ms) before reconnecting, then send Last-Event-ID.
RETRY_MS = 2000


def _frame(event: BoardEvent) -> str:
    data = json.dumps({**event.payload, "type": event.type, "school_id": event.school_id,
                       "at": event.at.isoformat()}, ensure_ascii=False)
    # The SSE id is the commit-order position, so Last-Event-ID resumes without a gap.
    return f"id: {event.seq}\nevent: {event.type}\ndata: {data}\n\n"


async def _stream(request: Request, hub: StreamHub, pickup, feed: events.Feed,
                  last_id: int | None) -> AsyncIterator[str]:
    """Events after `last_id` (from now if None), then live ones from the process's hub."""
    yield f"retry: {RETRY_MS}\n\n"
    # Closed on every exit, so the subscription is freed at once.
    async with aclosing(hub.stream(feed, last_id, pickup.sse_keepalive_seconds)) as rows:
        async for row in rows:
            if row is not None:
                yield _frame(row)
            elif await request.is_disconnected():
                return
            else:
                yield ": keepalive\n\n"


def _response(stream: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(stream, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _last(header: str | None, query: int | None) -> int | None:
    if header and header.strip().isdigit():
        return int(header.strip())
    return query


LastEventId = Annotated[str | None, Header(alias="Last-Event-ID")]


@router.get("/schools/{school_id}/board/events", response_class=EventStreamResponse,
            responses=EVENT_STREAM)
async def board_events(school_id: int, request: Request, sessions: Sessions, pickup: Pickup,
                       last_event_id: LastEventId = None, after: int | None = None,
                       hub: StreamHubDep = None) -> StreamingResponse:
    """The school board's live feed: `StudentStateChanged` and `StudentRosterChanged`."""
    await admin.get_school(sessions, school_id)
    # The dashboard calls this function directly, without the dependency.
    hub = hub or stream_hub(request)
    return _response(_stream(request, hub, pickup, events.school_feed(school_id),
                             _last(last_event_id, after)))


@router.get("/guardian/events", response_class=EventStreamResponse, responses=EVENT_STREAM)
async def guardian_events(guardian_id: GuardianId, request: Request, sessions: Sessions,
                          pickup: Pickup, hub: StreamHubDep, last_event_id: LastEventId = None,
                          after: int | None = None) -> StreamingResponse:
    """A guardian's feed: their students' state changes and their own roster changes."""
    return _response(_stream(request, hub, pickup,
                             events.guardian_feed(sessions, guardian_id),
                             _last(last_event_id, after)))
