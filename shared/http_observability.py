"""What an HTTP door adds to be watched: the access log and, when on, request spans."""

from __future__ import annotations

from typing import Any

from shared.logs.access import AccessLog
from shared.settings import Settings
from shared.tracing import instrument_app


def observe_http(app: Any, settings: Settings, *, service: str) -> None:
    """Outermost layers of a FastAPI app (after its routes): access log, then tracing."""
    if settings.access_log:
        app.add_middleware(AccessLog, service=service)
    instrument_app(app, settings)
