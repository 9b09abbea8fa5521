"""The pickup API under `/api/pickup`: board, records, guardian app, turnstile monitor, SSE."""

from fastapi import APIRouter

from services.api.routes.pickup import admin, board, events, guardian, monitor

router = APIRouter(prefix="/api/pickup", tags=["pickup"])
for _module in (admin, board, events, guardian, monitor):
    router.include_router(_module.router)
