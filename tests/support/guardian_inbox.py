"""A guardian notification receiver on loopback: it checks each delivery's Standard Webhooks
signature with our own verifier and keeps the sign-in links it was sent."""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from services.webhook_gateway.signature import StandardWebhooksV1

SECRET = "whsec_" + base64.b64encode(b"g" * 32).decode()


@dataclass
class Inbox:
    """What the webhook received, each body verified against `SECRET` first."""

    bodies: list[dict] = field(default_factory=list)
    refused: int = 0

    def app(self) -> Starlette:
        verifier = StandardWebhooksV1([SECRET])

        async def receive(request: Request) -> Response:
            body = await request.body()
            if not verifier.verify(dict(request.headers), body).valid:
                self.refused += 1
                return Response(status_code=401)
            self.bodies.append(await request.json())
            return Response(status_code=204)

        return Starlette(routes=[Route("/hooks", receive, methods=["POST"])])

    def links(self, guardian_id: int | None = None) -> list[str]:
        """The sign-in links received (for one guardian), oldest first."""
        return [b["link"] for b in self.bodies if b["kind"] == "sign-in-link"
                and (guardian_id is None or b["guardian_id"] == guardian_id)]

    async def next_link(self, guardian_id: int, seen: int = 0) -> str:
        """The guardian's first link after the `seen` ones (it leaves after the answer)."""
        async with asyncio.timeout(10):
            while len(self.links(guardian_id)) <= seen:
                await asyncio.sleep(0.02)
        return self.links(guardian_id)[seen]


def token_of(link: str) -> str:
    """The one-time token a link carries."""
    return parse_qs(urlsplit(link).query)["token"][0]
