"""The SISBAJUD executor's face to its doors (REST, gRPC, dashboard, webhook gateway, the
API's scrape, the dev banner): `SisbajudOperations`, and the values and inputs of its
operations."""

from __future__ import annotations

from activities.sisbajud.operator.actions import (
    Acknowledged,
    NoticeRequeued,
    OrderRequeued,
    ResultRequeued,
)
from activities.sisbajud.operator.decisions import Decision, Proposed, Resolved
from activities.sisbajud.operator.deliveries import (
    Delivery,
    DeliveryStatus,
    OrderUnavailable,
    StoreUnavailable,
)
from activities.sisbajud.operator.face import SisbajudOperations
from activities.sisbajud.operator.payloads import ActionIn, ResolutionIn
from activities.sisbajud.operator.routing_documents import RoutingDocument
from activities.sisbajud.operator.timeline import OrderTimeline, StateCount, TimelineEntry
from activities.sisbajud.operator.views import (
    Institution,
    InstitutionsView,
    OrderDetail,
    OutboxView,
)

__all__ = [
    "Acknowledged",
    "ActionIn",
    "Decision",
    "Delivery",
    "DeliveryStatus",
    "Institution",
    "InstitutionsView",
    "NoticeRequeued",
    "OrderDetail",
    "OrderRequeued",
    "OrderTimeline",
    "OrderUnavailable",
    "OutboxView",
    "Proposed",
    "ResolutionIn",
    "Resolved",
    "ResultRequeued",
    "RoutingDocument",
    "SisbajudOperations",
    "StateCount",
    "StoreUnavailable",
    "TimelineEntry",
]
