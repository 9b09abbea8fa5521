"""Guardian notifications: the outbox drain and the senders behind it."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

import httpx
from sqlalchemy import func, or_
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select, update
from sqlmodel.ext.asyncio.session import AsyncSession
from standardwebhooks import Webhook
from temporalio import activity

from activities.pickup import metrics
from activities.pickup.backlog import queue_backlog
from activities.pickup.contracts.board import (
    DrainBatchInput,
    DrainResult,
    NotificationStatus,
    Outbox,
)
from activities.pickup.contracts.names import drain_activity
from activities.pickup.models import Notification, Student
from activities.pickup.records import audit
from shared.db.models import as_utc, utcnow
from shared.heartbeat import beat
from shared.logs import props
from shared.settings import PickupSettings

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
    """POSTs each notification as JSON with an `Idempotency-Key` header, signed with
    Standard Webhooks v1 (`webhook-id`, `webhook-timestamp`, `webhook-signature`) when a
    `whsec_` secret is configured, as our own inbound webhooks are verified."""

    def __init__(self, http: httpx.AsyncClient, url: str, secret: str | None = None,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self._http = http
        self._url = url
        self._webhook = Webhook(secret) if secret else None
        self._clock = clock

    async def send(self, notification: Notification) -> None:
        """POST it; any non-2xx is an error to retry."""
        await self.post(notification.idempotency_key, {
            "guardian_id": notification.guardian_id, "student_id": notification.student_id,
            "kind": notification.kind, "message": notification.message})

    async def post(self, key: str, payload: dict[str, object]) -> None:
        """POST one message under its idempotency key; any non-2xx raises."""
        # The exact bytes signed are the bytes sent.
        body = json.dumps(payload).encode()
        headers = {"Idempotency-Key": key, "Content-Type": "application/json"}
        if self._webhook is not None:
            now = self._clock()
            # The message id stays the same across retries, so the receiver can drop repeats.
            headers |= {"webhook-id": key, "webhook-timestamp": str(int(now.timestamp())),
                        "webhook-signature": self._webhook.sign(key, now, body)}
        response = await self._http.post(self._url, headers=headers, content=body)
        response.raise_for_status()


class NotificationDelivery:
    """Drains the guardian notification outbox; each notification backs off on its own.

    A notification whose send fails gets `next_attempt_at` (exponential backoff) and the round
    goes on with the next one; after `notification_max_attempts` it is `failed` (counted,
    alarmed, requeued by an operator). The round itself fails only when the store does.
    """

    def __init__(self, sessions: async_sessionmaker[AsyncSession], sender: NotificationSender,
                 settings: PickupSettings, clock: Callable[[], datetime] = utcnow) -> None:
        self._sessions = sessions
        self._sender = sender
        self._settings = settings
        self._clock = clock

    @activity.defn(name=drain_activity(Outbox.NOTIFICATIONS))
    async def drain_notifications(self, request: DrainBatchInput) -> DrainResult:
        """Send due notifications oldest first; say when the next backed-off one is due."""
        now = self._clock()
        async with self._sessions() as session:
            due = list((await session.exec(
                select(N).where(N.status == NotificationStatus.PENDING,
                                or_(N.next_attempt_at.is_(None), N.next_attempt_at <= now))
                .order_by(N.id).limit(request.batch_size + 1))).all())
        sent = failed = 0
        for notification in due[: request.batch_size]:
            try:
                await self._sender.send(notification)
            except Exception as exc:
                failed += await self._attempt_failed(notification, f"{type(exc).__name__}: {exc}")
            else:
                await self._sent(notification)
                sent += 1
            beat(notification.id)
        retry_in = await self._publish()
        return DrainResult(delivered=sent, failed=failed,
                           remaining=max(0, len(due) - request.batch_size),
                           retry_in_seconds=retry_in)

    def backoff(self, attempts: int) -> timedelta:
        """The wait after the `attempts`-th failed send: doubling, capped."""
        seconds = self._settings.notification_retry_initial_seconds * 2 ** (attempts - 1)
        return timedelta(seconds=min(seconds, self._settings.notification_retry_max_seconds))

    async def _sent(self, notification: Notification) -> None:
        at = self._clock()
        async with self._sessions() as session, session.begin():
            await session.exec(update(N).where(N.id == notification.id,
                                               N.status == NotificationStatus.PENDING).values(
                status=NotificationStatus.SENT, attempts=N.attempts + 1, sent_at=at,
                last_attempt_at=at, last_error=None, next_attempt_at=None))
        metrics.NOTIFICATION_ATTEMPTS.labels(notification.kind, "sent").inc()

    async def _attempt_failed(self, notification: Notification, error: str) -> int:
        """Back the notification off, or give up on it; 1 when it is now `failed`."""
        at = self._clock()
        attempts = notification.attempts + 1
        gave_up = attempts >= self._settings.notification_max_attempts
        values: dict[str, object] = {"attempts": attempts, "last_error": error[:500],
                                     "last_attempt_at": at}
        if gave_up:
            values.update(status=NotificationStatus.FAILED, next_attempt_at=None)
        else:
            values["next_attempt_at"] = at + self.backoff(attempts)
        async with self._sessions() as session, session.begin():
            # On the attempts read: a repeated round (activity retry) does not count twice.
            result = await session.exec(update(N).where(
                N.id == notification.id, N.status == NotificationStatus.PENDING,
                N.attempts == notification.attempts).values(**values))
            if result.rowcount != 1:
                return 0
            if gave_up:
                # The student's school, so the school's day (audit, dismissal report) has it.
                school_id = (await session.exec(select(Student.school_id).where(
                    Student.id == notification.student_id))).first()
                audit(session, entity="notification", entity_id=notification.id,
                      action="notification-failed", actor="notifier", at=at,
                      school_id=school_id, from_state=NotificationStatus.PENDING,
                      to_state=NotificationStatus.FAILED, reason=error[:200], attempts=attempts,
                      kind=notification.kind, student_id=notification.student_id)
        metrics.NOTIFICATION_ATTEMPTS.labels(notification.kind,
                                             "failed" if gave_up else "retry").inc()
        if gave_up:
            log.warning("Notification %s to guardian %s failed after %s attempts: %s",
                        notification.id, notification.guardian_id, attempts, error,
                        extra=props(NotificationId=notification.id, Kind=notification.kind,
                                    Attempts=attempts))
        return int(gave_up)

    async def _publish(self) -> float | None:
        """Set the outbox gauges; seconds until the next backed-off notification is due."""
        now = self._clock()
        async with self._sessions() as session:
            pending, failed, oldest = await queue_backlog(session, N)
            next_at = (await session.exec(select(func.min(N.next_attempt_at)).where(
                N.status == NotificationStatus.PENDING))).one()
        age = (now - as_utc(oldest)).total_seconds() if oldest else 0.0
        metrics.set_queue(Outbox.NOTIFICATIONS, pending=pending, failed=failed,
                          oldest_seconds=max(age, 0.0))
        return None if next_at is None else max(0.0, (as_utc(next_at) - now).total_seconds())
