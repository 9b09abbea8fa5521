"""Guardian notifications: the outbox with its backlog, and a failed one's requeue."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query

from activities.pickup.contracts.board import NotificationStatus
from activities.pickup.operator import notifications as outbox
from activities.pickup.operator import scope as school_scope
from services.api.routes.pickup.answers import (
    NotificationAnswer,
)
from services.api.routes.pickup.deps import Actor, Kick, SchoolScope, Sessions

router = APIRouter()


@router.get("/notifications")
async def list_notifications(sessions: Sessions, status: NotificationStatus | None = None,
                             student_id: int | None = None, guardian_id: int | None = None,
                             limit: int = Query(100, ge=1, le=1000),
                             scope: SchoolScope = None) -> dict[str, Any]:
    """Notifications in id order (`failed` ones gave up and wait for a requeue) and totals."""
    # The outbox and its totals span every school: an operation for the global key.
    school_scope.require_global(scope, "The notification outbox")
    rows, backlog = await outbox.notifications(sessions, status=status, student_id=student_id,
                                               guardian_id=guardian_id, limit=limit)
    return {"pending": backlog.pending, "failed": backlog.failed,
            "oldest_pending_seconds": backlog.oldest_pending_seconds,
            "notifications": [row.model_dump(mode="json") for row in rows]}


@router.post("/notifications/{notification_id}/requeue",
              response_model=NotificationAnswer)
async def requeue(notification_id: int, sessions: Sessions, actor: Actor, kick: Kick,
                  scope: SchoolScope = None) -> dict[str, Any]:
    """Give a failed notification a fresh series of attempts (409 unless it is `failed`)."""
    school_scope.require_global(scope, "The notification outbox")
    notification = await outbox.requeue(sessions, kick, notification_id=notification_id,
                                        actor=actor)
    return notification.model_dump(mode="json")
