"""Operator surface of the SISBAJUD executor: orders, notices, alarms, institutions, outbox,
human decisions and their resolution, orphan operations; every list `?limit=&cursor=`."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from fastapi import APIRouter, Query

from activities.sisbajud.contracts.orders import AlarmCode, OrderState
from services.api.filters import AnyCase, value_of
from services.api.routes import sisbajud_admin
from services.api.routes.sisbajud_decisions import router as decisions_router
from services.api.routes.sisbajud_ops import router as ops_router
from services.api.routes.sisbajud_wire import (
    SisbajudAlarmOut,
    SisbajudInstitutionsPage,
    SisbajudNoticeOut,
    SisbajudOrderDetailOut,
    SisbajudOrderOut,
    SisbajudOrphanOut,
    SisbajudOutboxPage,
)
from services.app_context import SisbajudFace
from shared.wire import PageOut

router = APIRouter()
operator = APIRouter(prefix="/api/sisbajud", tags=["sisbajud"])
Limit = Annotated[int, Query(ge=1, le=500)]
# The `nextCursor` of the page before; none for the first page.
Cursor = Annotated[str | None, Query()]


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
async def list_orders(sisbajud: SisbajudFace,
                      state: Annotated[OrderState | None, AnyCase] = None,
                      limit: Limit = 100, cursor: Cursor = None) -> PageOut[SisbajudOrderOut]:
    """Orders with state, effect and reason, most recently changed first."""
    page = await sisbajud.views.orders(value_of(state), limit, cursor)
    return PageOut[SisbajudOrderOut].model_validate(page)


@operator.get("/orders/{order_id}")
async def get_order(order_id: str, sisbajud: SisbajudFace) -> SisbajudOrderDetailOut:
    """One order with its ledger writes and the results it queued."""
    detail = await sisbajud.views.order(order_id)
    return SisbajudOrderDetailOut.model_validate({
        **SisbajudOrderOut.model_validate(detail.order).model_dump(),
        "writes": detail.writes, "results": detail.results})


@operator.get("/notices")
async def list_notices(sisbajud: SisbajudFace,
                       state: Annotated[NoticeState | None, AnyCase] = None,
                       limit: Limit = 100, cursor: Cursor = None) -> PageOut[SisbajudNoticeOut]:
    """Recorded deliveries, newest first; `state=PARKED` lists the parked ones."""
    page = await sisbajud.views.notices(value_of(state), limit, cursor)
    return PageOut[SisbajudNoticeOut].model_validate(page)


@operator.get("/alarms")
async def list_alarms(sisbajud: SisbajudFace, code: AlarmCode | None = None,
                      limit: Limit = 100, cursor: Cursor = None) -> PageOut[SisbajudAlarmOut]:
    """Alarms, newest first."""
    page = await sisbajud.views.alarms(value_of(code), limit, cursor)
    return PageOut[SisbajudAlarmOut].model_validate(page)


@operator.get("/institutions")
async def list_institutions(sisbajud: SisbajudFace, limit: Limit = 100,
                            cursor: Cursor = None) -> SisbajudInstitutionsPage:
    """Configured and recorded institutions, with their owner and whether it is us."""
    view = await sisbajud.views.institutions(limit, cursor)
    return SisbajudInstitutionsPage.model_validate(view)


@operator.get("/outbox")
async def outbox(sisbajud: SisbajudFace, state: Annotated[OutboxState | None, AnyCase] = None,
                 limit: Limit = 100, cursor: Cursor = None) -> SisbajudOutboxPage:
    """Depth and age of what waits to be sent, and the rows themselves."""
    return SisbajudOutboxPage.model_validate(
        await sisbajud.views.outbox(value_of(state), limit, cursor))


@operator.get("/orphans")
async def list_orphans(sisbajud: SisbajudFace, block_alias: str | None = None,
                       limit: Limit = 100, cursor: Cursor = None) -> PageOut[SisbajudOrphanOut]:
    """Operations on block accounts this executor did not write, newest first."""
    page = await sisbajud.views.orphans(block_alias, limit, cursor)
    return PageOut[SisbajudOrphanOut].model_validate(page)


router.include_router(operator)
router.include_router(decisions_router)
router.include_router(ops_router)
router.include_router(sisbajud_admin.router)
