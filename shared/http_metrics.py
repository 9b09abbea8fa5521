"""HTTP answers counted by status class, for the 5xx-rate alert of every HTTP front door."""

from __future__ import annotations

from prometheus_client import Counter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

RESPONSES = Counter("esteira_http_responses_total",
                    "HTTP responses by service and status class (2xx, 4xx, 5xx...)",
                    ["service", "code"])


class ResponseCounter:
    """Counts each HTTP response's status class; an exception that escapes counts as 5xx."""

    def __init__(self, app: ASGIApp, service: str, verdicts: tuple[str, ...] = ()) -> None:
        self.app = app
        self.service = service
        # Paths whose 503 is an answer, not a failure (a readiness verdict): not counted.
        self.verdicts = verdicts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(self.verdicts):
            await self.app(scope, receive, send)
            return
        status: list[int] = []

        async def counting_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        except BaseException:
            # Starlette's outermost handler turns it into a 500 after we see it go by.
            if not status:
                status.append(500)
            raise
        finally:
            if status:
                RESPONSES.labels(self.service, f"{status[0] // 100}xx").inc()
