"""Operator surface of the SISBAJUD executor: orders, notices, alarms, institutions, outbox,
human decisions and their resolution, orphan operations."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from fastapi import APIRouter, Query

from activities.sisbajud.operator import views
from services.api.filters import AnyCase, value_of
from services.api.routes import sisbajud_admin
from services.api.routes.sisbajud_decisions import router as decisions_router
from services.api.routes.sisbajud_ops import router as ops_router
from services.app_context import ContextDep
from shared.contracts.sisbajud import AlarmCode, OrderState

router = APIRouter()
operator = APIRouter(prefix="/api/sisbajud", tags=["sisbajud"])
Limit = Annotated[int, Query(ge=1, le=500)]


class NoticeState(StrEnum):
    """The states a recorded delivery (`sisbajud_notices.state`) takes."""

    ACCEPTED = "ACCEPTED"
    INGESTED = "INGESTED"
    DUPLICATE = "DUPLICATE"
    PARKED = "PARKED"


class OutboxState(StrEnum):
    """The states of a result waiting to be sent (`sisbajud_outbox.state`)."""

    PENDING = "PENDING"
    SENT = "SENT"
    PARKED = "PARKED"


@operator.get("/orders")
async def list_orders(ctx: ContextDep, state: Annotated[OrderState | None, AnyCase] = None,
                      limit: Limit = 100,
                      offset: Annotated[int, Query(ge=0)] = 0) -> dict[str, Any]:
    """Orders with state, effect and reason, most recently changed first."""
    return await views.list_orders(ctx.sessions, value_of(state), limit, offset)


@operator.get("/orders/{order_id}")
async def get_order(order_id: str, ctx: ContextDep) -> dict[str, Any]:
    """One order with its ledger writes and the results it queued."""
    return await views.get_order(ctx.sessions, order_id)


@operator.get("/notices")
async def list_notices(ctx: ContextDep, state: Annotated[NoticeState | None, AnyCase] = None,
                       limit: Limit = 100) -> dict[str, Any]:
    """Recorded deliveries, newest first; `state=PARKED` lists the parked ones."""
    return await views.list_notices(ctx.sessions, value_of(state), limit)


@operator.get("/alarms")
async def list_alarms(ctx: ContextDep, code: AlarmCode | None = None,
                      limit: Limit = 100) -> dict[str, Any]:
    """Alarms, newest first."""
    return await views.list_alarms(ctx.sessions, value_of(code), limit)


@operator.get("/institutions")
async def list_institutions(ctx: ContextDep) -> dict[str, Any]:
    """Configured and recorded institutions, with their owner and whether it is us."""
    return await views.list_institutions(ctx.sessions, ctx.settings)


@operator.get("/outbox")
async def outbox(ctx: ContextDep, state: Annotated[OutboxState | None, AnyCase] = None,
                 limit: Limit = 100) -> dict[str, Any]:
    """Depth and age of what waits to be sent, and the rows themselves."""
    return await views.outbox(ctx.sessions, value_of(state), limit)


@operator.get("/orphans")
async def list_orphans(ctx: ContextDep, block_alias: str | None = None,
                       limit: Limit = 100) -> dict[str, Any]:
    """Operations on block accounts this executor did not write, newest first."""
    return await views.list_orphans(ctx.sessions, block_alias, limit)


router.include_router(operator)
router.include_router(decisions_router)
router.include_router(ops_router)
router.include_router(sisbajud_admin.router)
