"""The SISBAJUD executor's face to its doors (REST, gRPC, dashboard, webhook gateway, the
API's scrape): every operation they may call, each module one job."""

from __future__ import annotations

from activities.sisbajud.operator.acknowledge import acknowledge_alarm, acknowledge_orphan
from activities.sisbajud.operator.decisions import (
    list_decisions,
    moves_money,
    resolve_decision,
)
from activities.sisbajud.operator.face import SisbajudOperations
from activities.sisbajud.operator.payloads import ActionIn, ResolutionIn
from activities.sisbajud.operator.requeue import requeue_notice, requeue_order, requeue_result

__all__ = [
    "ActionIn",
    "ResolutionIn",
    "SisbajudOperations",
    "acknowledge_alarm",
    "acknowledge_orphan",
    "list_decisions",
    "moves_money",
    "requeue_notice",
    "requeue_order",
    "requeue_result",
    "resolve_decision",
]
