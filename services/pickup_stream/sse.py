"""A pickup feed served as Server-Sent Events, with `Last-Event-ID` catch-up; and the
process's hub, installed on the app both doors share."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import StreamingResponse
from pydantic.alias_generators import to_camel

from activities.pickup.models import BoardEvent
from activities.pickup.operator import Feed, PickupOperations
from services.pickup_stream.hub import StreamHub

EVENT_STREAM_MEDIA_TYPE = "text/event-stream"
# Browsers wait this long (ms) before reconnecting, then send Last-Event-ID.
RETRY_MS = 2000


def frame(event: BoardEvent) -> str:
    """One SSE frame: the event's type, its commit-order id, its data in camelCase."""
    data: dict[str, Any] = {**event.payload, "type": event.type, "school_id": event.school_id,
                            "at": event.at.isoformat()}
    body = json.dumps({to_camel(key): value for key, value in data.items()},
                      ensure_ascii=False)
    # The SSE id is the commit-order position, so Last-Event-ID resumes without a gap.
    return f"id: {event.seq}\nevent: {event.type}\ndata: {body}\n\n"


def last_event_id(header: str | None, query: int | None) -> int | None:
    """Where a stream resumes: the `Last-Event-ID` header, else `?after=`, else now."""
    if header and header.strip().isdigit():
        return int(header.strip())
    return query


def event_stream(request: Request, hub: StreamHub, feed: Feed,
                 last_id: int | None) -> StreamingResponse:
    """The feed's events after `last_id` (from now if None), then live ones from the hub."""

    async def frames() -> AsyncIterator[str]:
        yield f"retry: {RETRY_MS}\n\n"
        # Closed on every exit, so the subscription is freed at once.
        async with aclosing(hub.stream(feed, last_id)) as rows:
            async for row in rows:
                if row is not None:
                    yield frame(row)
                elif await request.is_disconnected():
                    return
                else:
                    yield ": keepalive\n\n"

    return StreamingResponse(frames(), media_type=EVENT_STREAM_MEDIA_TYPE,
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def install_stream_hub(app: FastAPI, pickup: PickupOperations) -> None:
    """Give the app its hub (no I/O: the poller starts with the first stream); it polls every
    `…__SSE_POLL_SECONDS` and keeps idle streams alive every `…__SSE_KEEPALIVE_SECONDS`."""
    app.state.pickup_stream = StreamHub(
        pickup, poll_seconds=pickup.settings.pickup.sse_poll_seconds)


@contextlib.asynccontextmanager
async def stream_lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Close the hub's streams and poller when the app stops."""
    yield
    await app.state.pickup_stream.close()


def stream_hub(request: Request) -> StreamHub:
    """The app's hub (set by `install_stream_hub`)."""
    hub: StreamHub = request.app.state.pickup_stream
    return hub


StreamHubDep = Annotated[StreamHub, Depends(stream_hub)]
