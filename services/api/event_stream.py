"""How a Server-Sent Events route is declared, so the OpenAPI document says `text/event-stream`."""

from __future__ import annotations

from typing import Any

from fastapi.responses import StreamingResponse

EVENT_STREAM_MEDIA_TYPE = "text/event-stream"


class EventStreamResponse(StreamingResponse):
    """A streaming response of Server-Sent Events."""

    media_type = EVENT_STREAM_MEDIA_TYPE


# `responses=` of an SSE route: frames of `id:`, `event:` and `data:` (JSON) lines.
EVENT_STREAM: dict[int | str, dict[str, Any]] = {200: {
    "description": "Server-Sent Events: `id` (resume with Last-Event-ID), `event`, `data` (JSON).",
    "content": {EVENT_STREAM_MEDIA_TYPE: {"schema": {"type": "string"}}},
}}
