"""Guardian notifications as an operator sees them: list, backlog, a failed one's requeue."""

from __future__ import annotations

from sqlmodel import select, update

from activities.pickup.contracts.board import NotificationStatus, PickupErrorCode
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.kick import Kicker
from activities.pickup.models import Notification, Student
from activities.pickup.operator.queues import OutboxPage, outbox_page
from activities.pickup.records import audit
from shared.db.engine import Sessions
from shared.db.models import utcnow

N = Notification


class NotificationOutbox:
    """The guardian notification outbox: its rows, and a failed one's fresh attempts."""

    def __init__(self, sessions: Sessions, kicker: Kicker) -> None:
        self._sessions = sessions
        self._kicker = kicker

    async def notifications(self, *, status: NotificationStatus | None = None,
                            student_id: int | None = None, guardian_id: int | None = None,
                            limit: int = 100, cursor: str | None = None
                            ) -> OutboxPage[Notification]:
        """Notifications in id order (filtered), with the outbox's backlog."""
        query = select(N)
        if status is not None:
            query = query.where(N.status == status)
        if student_id is not None:
            query = query.where(N.student_id == student_id)
        if guardian_id is not None:
            query = query.where(N.guardian_id == guardian_id)
        return await outbox_page(self._sessions, N, query, limit=limit, cursor=cursor)

    async def requeue(self, *, notification_id: int, actor: str) -> Notification:
        """A failed notification gets a fresh series of attempts, now; the drain is woken."""
        now = utcnow()
        async with self._sessions() as session, session.begin():
            notification = await session.get(N, notification_id)
            if notification is None:
                raise not_found("Notification", notification_id)
            result = await session.exec(update(N).where(
                N.id == notification_id, N.status == NotificationStatus.FAILED,
            ).values(status=NotificationStatus.PENDING, attempts=0, next_attempt_at=None))
            if result.rowcount != 1:
                raise pickup_error(PickupErrorCode.NOTIFICATION_NOT_FAILED,
                                   f"Notification {notification_id} is "
                                   f"{notification.status}.")
            student = await session.get(Student, notification.student_id)
            audit(session, entity="notification", entity_id=notification_id,
                  action="requeue", actor=actor, at=now,
                  school_id=student.school_id if student else None,
                  from_state=NotificationStatus.FAILED, to_state=NotificationStatus.PENDING,
                  reason=notification.last_error, attempts=notification.attempts)
            await session.refresh(notification)
        await self._kicker.drains(notifications=True)
        return notification
