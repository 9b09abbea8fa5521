"""Guardian notifications: the outbox with its backlog, and a failed one's requeue."""

from __future__ import annotations

from fastapi import APIRouter

from activities.pickup.contracts.board import NotificationStatus
from services.api.routes.pickup.answers import Notification, NotificationPage
from services.api.routes.pickup.deps import Actor, Cursor, Limit, SchoolScope
from services.app_context import PickupFace

router = APIRouter()


@router.get("/notifications", response_model=NotificationPage)
async def list_notifications(pickup: PickupFace, scope: SchoolScope,
                             status: NotificationStatus | None = None,
                             student_id: int | None = None, guardian_id: int | None = None,
                             limit: Limit = 100, cursor: Cursor = None) -> NotificationPage:
    """Notifications in id order (`failed` ones gave up and wait for a requeue) and totals."""
    # The outbox and its totals span every school: an operation for the global key.
    pickup.scope.require_global(scope, "The notification outbox")
    found = await pickup.notifications.notifications(
        status=status, student_id=student_id, guardian_id=guardian_id, limit=limit,
        cursor=cursor)
    return NotificationPage(items=[Notification.model_validate(n) for n in found.page.items],
                            next_cursor=found.page.next_cursor, pending=found.backlog.pending,
                            failed=found.backlog.failed,
                            oldest_pending_seconds=found.backlog.oldest_pending_seconds)


@router.post("/notifications/{notification_id}/requeue", response_model=Notification)
async def requeue(notification_id: int, pickup: PickupFace, actor: Actor,
                  scope: SchoolScope) -> Notification:
    """Give a failed notification a fresh series of attempts (409 unless it is `failed`)."""
    pickup.scope.require_global(scope, "The notification outbox")
    return Notification.model_validate(await pickup.notifications.requeue(
        notification_id=notification_id, actor=actor))
