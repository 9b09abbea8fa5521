"""The pickup API under `/api/pickup`: board, records, guardian app, turnstile monitor, SSE."""

from fastapi import APIRouter, Depends

from services.api.routes.pickup import (
    admin,
    board,
    credentials,
    day,
    events,
    guardian,
    monitor,
    notifications,
    records,
    reports,
    roster,
)
from services.api.routes.pickup.deps import school_guard

router = APIRouter(prefix="/api/pickup", tags=["pickup"])
for _module in (admin, board, credentials, day, events, guardian, monitor, notifications, records,
                reports, roster):
    # Every id in a path is checked against a school-scoped key's school.
    router.include_router(_module.router, dependencies=[Depends(school_guard)])
