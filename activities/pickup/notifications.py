"""Guardian notifications: the outbox drain and the senders behind it."""

from __future__ import annotations

import logging
from typing import Protocol

import httpx
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select, update
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity
from temporalio.exceptions import ApplicationError

from shared.contracts.pickup import (
    DrainBatchInput,
    DrainResult,
    NotificationStatus,
    Outbox,
    PickupErrorCode,
)
from shared.contracts.pickup_names import drain_activity
from shared.db.models import utcnow
from shared.db.pickup_models import Notification
from shared.logs import props

log = logging.getLogger("esteira.pickup.notifications")
N = Notification


class NotificationSender(Protocol):
    """Delivers one notification; raises to have it retried."""

    async def send(self, notification: Notification) -> None:
        """Send it (the idempotency key lets the receiver drop a repeat)."""


class LogSender:
    """The default without a push provider: one log line per notification."""

    async def send(self, notification: Notification) -> None:
        """Log it."""
        log.info("Guardian %s notified: %s", notification.guardian_id, notification.message,
                 extra=props(GuardianId=notification.guardian_id, Kind=notification.kind,
                             IdempotencyKey=notification.idempotency_key))


class WebhookSender:
    """POSTs each notification as JSON with an `Idempotency-Key` header."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self._http = http
        self._url = url

    async def send(self, notification: Notification) -> None:
        """POST it; any non-2xx is an error to retry."""
        response = await self._http.post(self._url, headers={
            "Idempotency-Key": notification.idempotency_key}, json={
            "guardian_id": notification.guardian_id, "student_id": notification.student_id,
            "kind": notification.kind, "message": notification.message})
        response.raise_for_status()


class NotificationDelivery:
    """Drains the guardian notification outbox."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession],
                 sender: NotificationSender) -> None:
        self._sessions = sessions
        self._sender = sender

    @activity.defn(name=drain_activity(Outbox.NOTIFICATIONS))
    async def drain_notifications(self, request: DrainBatchInput) -> DrainResult:
        """Send pending notifications oldest first; a failure stops the round for a retry."""
        async with self._sessions() as session:
            pending = list((await session.exec(
                select(N).where(N.status == NotificationStatus.PENDING).order_by(N.id)
                .limit(request.batch_size + 1))).all())
        sent = 0
        for notification in pending[: request.batch_size]:
            try:
                await self._sender.send(notification)
            except Exception as exc:
                await self._mark(notification.id, None, f"{type(exc).__name__}: {exc}")
                raise ApplicationError(f"notification {notification.id}: {exc}",
                                       type=PickupErrorCode.NOTIFICATION_FAILED) from None
            await self._mark(notification.id, NotificationStatus.SENT, None)
            sent += 1
        return DrainResult(delivered=sent, remaining=len(pending) - sent)

    async def _mark(self, notification_id: int, status: NotificationStatus | None,
                    error: str | None) -> None:
        values: dict[str, object] = {"attempts": N.attempts + 1, "last_error": error}
        if status is not None:
            values.update(status=status, sent_at=utcnow())
        async with self._sessions() as session, session.begin():
            await session.exec(update(N).where(N.id == notification_id,
                                               N.status == NotificationStatus.PENDING)
                               .values(**values))
