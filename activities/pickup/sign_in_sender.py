"""Sign-in links leave at once through the guardian notification webhook, never the outbox.

The outbox keeps each message readable in `pickup_notifications` (and in `GET
/notifications`) and retries it for hours; a sign-in link is a live credential for fifteen
minutes. So it is posted once, right after the guardian's request was answered, on the same
webhook and with the same Standard Webhooks signature as every notification (`kind`
`sign-in-link`, `student_id` null, plus `link` and `expires_at`); a failed post is logged and
counted, and the guardian asks again. The store keeps only the link's hash.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import httpx

from activities.pickup import metrics
from activities.pickup.contracts.board import NotificationKind
from activities.pickup.notifications import WebhookSender
from shared.logs import props
from shared.settings import Settings

log = logging.getLogger("esteira.pickup.sign_in")
KIND = NotificationKind.SIGN_IN_LINK
# One attempt, bounded: the guardian is waiting for it, and may simply ask again.
SEND_TIMEOUT_SECONDS = 10.0
LINK_PATH = "/guardian/link"


@dataclass(frozen=True)
class SignInMessage:
    """One link for one guardian, as the webhook carries it."""

    guardian_id: int
    link_id: int
    link: str
    expires_at: datetime
    minutes: int

    @property
    def text(self) -> str:
        """What the guardian reads, in the school's language."""
        return (f"Seu link de acesso à retirada escolar (vale por {self.minutes} minutos, "
                f"uma única vez): {self.link}")

    def payload(self) -> dict[str, object]:
        """The webhook body: a notification's fields, plus the link and its expiry."""
        return {"guardian_id": self.guardian_id, "student_id": None, "kind": KIND,
                "message": self.text, "link": self.link,
                "expires_at": self.expires_at.isoformat()}


def page_base_url(settings: Settings) -> str:
    """Where guardians reach the dashboard: the setting, the public URL, else this host."""
    base = (settings.pickup.guardian_page_url or settings.notifications.public_url
            or f"http://{settings.host}:{settings.ports.api}")
    return base.rstrip("/")


class SignInSender:
    """Posts sign-in links to the notification webhook (signed), or logs them in
    Development when no webhook is configured."""

    def __init__(self, settings: Settings,
                 client: Callable[[], httpx.AsyncClient] | None = None) -> None:
        self._settings = settings
        self._client = client or (lambda: httpx.AsyncClient(timeout=SEND_TIMEOUT_SECONDS))

    async def send_all(self, messages: list[SignInMessage]) -> None:
        """Send each message; a failure is logged and counted, never raised."""
        for message in messages:
            outcome = "sent" if await self._send(message) else "failed"
            metrics.NOTIFICATION_ATTEMPTS.labels(KIND, outcome).inc()

    async def _send(self, message: SignInMessage) -> bool:
        pickup, development = self._settings.pickup, self._settings.environment == "Development"
        extra = props(GuardianId=message.guardian_id, Kind=KIND, LinkId=message.link_id)
        if not pickup.notification_webhook_url:
            if development:
                log.info("Sign-in link for guardian %s (no webhook in Development): %s",
                         message.guardian_id, message.link, extra=extra)
                return True
            log.error("Sign-in link %s for guardian %s not sent: no notification webhook "
                      "(ESTEIRA_PICKUP__NOTIFICATION_WEBHOOK_URL)", message.link_id,
                      message.guardian_id, extra=extra)
            return False
        secret = pickup.notification_webhook_secret
        if secret is None and not development:
            log.error("Sign-in link %s not sent: the webhook has no signing secret outside "
                      "Development", message.link_id, extra=extra)
            return False
        try:
            async with self._client() as http:
                sender = WebhookSender(http, pickup.notification_webhook_url,
                                       secret.get_secret_value() if secret else None)
                await sender.post(f"sign-in-link:{message.link_id}", message.payload())
        except Exception as exc:
            log.warning("Sign-in link %s for guardian %s failed: %s: %s", message.link_id,
                        message.guardian_id, type(exc).__name__, exc, extra=extra)
            return False
        return True
