"""Server-Sent Events from the broadcast table, with `Last-Event-ID` catch-up."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import StreamingResponse
from sqlalchemy import func, or_
from sqlmodel import and_, select

from activities.pickup.access import linked_students
from activities.pickup.errors import not_found
from services.api.routes.pickup.deps import GuardianId, Pickup, Sessions
from shared.db.models import utcnow
from shared.db.pickup_models import BoardEvent, School

router = APIRouter()
BATCH = 500
# Browsers wait this long (ms) before reconnecting, then send Last-Event-ID.
RETRY_MS = 2000

Filter = Callable[[], Awaitable[object]]


def _frame(event: BoardEvent) -> str:
    data = json.dumps({**event.payload, "type": event.type, "school_id": event.school_id,
                       "at": event.at.isoformat()}, ensure_ascii=False)
    return f"id: {event.id}\nevent: {event.type}\ndata: {data}\n\n"


async def _stream(request: Request, sessions, pickup, where: Filter,
                  last_id: int | None) -> AsyncIterator[str]:
    """Events after `last_id` (after the newest one if None), then live ones by polling."""
    if last_id is None:
        async with sessions() as session:
            last_id = (await session.exec(select(func.max(BoardEvent.id)))).one() or 0
    yield f"retry: {RETRY_MS}\n\n"
    quiet = 0.0
    while not await request.is_disconnected():
        async with sessions() as session:
            rows = (await session.exec(select(BoardEvent).where(
                BoardEvent.id > last_id, await where()).order_by(BoardEvent.id).limit(BATCH))).all()
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
    async with sessions() as session:
        if await session.get(School, school_id) is None:
            raise not_found("School", school_id)

    async def where() -> object:
        return BoardEvent.school_id == school_id

    return _response(_stream(request, sessions, pickup, where, _last(last_event_id, after)))


@router.get("/guardian/events")
async def guardian_events(guardian_id: GuardianId, request: Request, sessions: Sessions,
                          pickup: Pickup, last_event_id: LastEventId = None,
                          after: int | None = None) -> StreamingResponse:
    """A guardian's feed: their students' state changes and their own roster changes."""

    async def where() -> object:
        async with sessions() as session:
            students = [s.id for s in await linked_students(session, guardian_id, utcnow())]
        return or_(BoardEvent.guardian_id == guardian_id,
                   and_(BoardEvent.guardian_id.is_(None), BoardEvent.student_id.in_(students)))

    return _response(_stream(request, sessions, pickup, where, _last(last_event_id, after)))
