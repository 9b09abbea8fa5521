"""Guardian notifications as an operator sees them: list, backlog, a failed one's requeue."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select, update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.pickup.backlog import queue_backlog
from activities.pickup.contracts.board import NotificationStatus, PickupErrorCode
from activities.pickup.errors import not_found, pickup_error
from activities.pickup.kick import Kicker
from activities.pickup.models import Notification, Student
from activities.pickup.operator.ledger import Backlog, backlog_at
from activities.pickup.records import audit
from shared.db.models import utcnow

Sessions = async_sessionmaker[AsyncSession]
N = Notification


async def notifications(sessions: Sessions, *, status: NotificationStatus | None,
                        student_id: int | None, guardian_id: int | None, limit: int
                        ) -> tuple[list[Notification], Backlog]:
    """Notifications in id order (filtered), with the outbox's backlog."""
    query = select(N).order_by(N.id).limit(limit)
    if status is not None:
        query = query.where(N.status == status)
    if student_id is not None:
        query = query.where(N.student_id == student_id)
    if guardian_id is not None:
        query = query.where(N.guardian_id == guardian_id)
    now = utcnow()
    async with sessions() as session:
        rows = list((await session.exec(query)).all())
        backlog = backlog_at(*await queue_backlog(session, N), now)
    return rows, backlog


async def requeue(sessions: Sessions, kicker: Kicker, *, notification_id: int,
                  actor: str) -> Notification:
    """A failed notification gets a fresh series of attempts, now; the drain is woken."""
    now = utcnow()
    async with sessions() as session, session.begin():
        notification = await session.get(N, notification_id)
        if notification is None:
            raise not_found("Notification", notification_id)
        result = await session.exec(update(N).where(
            N.id == notification_id, N.status == NotificationStatus.FAILED,
        ).values(status=NotificationStatus.PENDING, attempts=0, next_attempt_at=None))
        if result.rowcount != 1:
            raise pickup_error(PickupErrorCode.NOTIFICATION_NOT_FAILED,
                               f"Notification {notification_id} is {notification.status}.")
        student = await session.get(Student, notification.student_id)
        audit(session, entity="notification", entity_id=notification_id, action="requeue",
              actor=actor, at=now, school_id=student.school_id if student else None,
              from_state=NotificationStatus.FAILED, to_state=NotificationStatus.PENDING,
              reason=notification.last_error, attempts=notification.attempts)
        notification = await session.get(N, notification_id, populate_existing=True)
    await kicker.drains(notifications=True)
    return notification
