"""Server-Sent Events from the broadcast table, with `Last-Event-ID` catch-up."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse

from services.api.event_stream import EVENT_STREAM, EventStreamResponse
from services.api.routes.pickup.deps import GuardianId
from services.app_context import PickupFace
from services.pickup_stream.sse import StreamHubDep, event_stream, last_event_id

router = APIRouter()

LastEventId = Annotated[str | None, Header(alias="Last-Event-ID")]


@router.get("/schools/{school_id}/board/events", response_class=EventStreamResponse,
            responses=EVENT_STREAM)
async def board_events(school_id: int, request: Request, pickup: PickupFace,
                       hub: StreamHubDep, last_event_id_header: LastEventId = None,
                       after: int | None = None) -> StreamingResponse:
    """The school board's live feed: `StudentStateChanged` and `StudentRosterChanged`."""
    await pickup.schools.get(school_id)
    return event_stream(request, hub, pickup.feeds.school_feed(school_id),
                        last_event_id(last_event_id_header, after))


@router.get("/guardian/events", response_class=EventStreamResponse, responses=EVENT_STREAM)
async def guardian_events(guardian_id: GuardianId, request: Request, pickup: PickupFace,
                          hub: StreamHubDep, last_event_id_header: LastEventId = None,
                          after: int | None = None) -> StreamingResponse:
    """A guardian's feed: their students' state changes and their own roster changes."""
    return event_stream(request, hub, pickup.feeds.guardian_feed(guardian_id),
                        last_event_id(last_event_id_header, after))
