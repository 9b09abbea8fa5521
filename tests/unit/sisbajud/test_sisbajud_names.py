"""Every SISBAJUD name on Temporal comes from the contract's names module, values unchanged."""

from __future__ import annotations

from temporalio import activity, workflow

from activities.sisbajud.contracts import names
from activities.sisbajud.orders import OrderActivities
from activities.sisbajud.plans import PlanActivities
from activities.sisbajud.reconcile import ReconcileActivities
from activities.sisbajud.resolution_legs import ResolutionActivities
from activities.sisbajud.tick import TickActivities
from activities.sisbajud.writes import WriteActivities
from workflows.sisbajud.order import SisbajudOrderWorkflow
from workflows.sisbajud.tick import SisbajudTickWorkflow

# The published names: saved histories and running workflows hold these strings.
PUBLISHED = {
    "TASK_QUEUE": "sisbajud-v1",
    "ORDER_WORKFLOW": "sisbajud-order",
    "TICK_WORKFLOW": "sisbajud-tick",
    "NOTICE_SIGNAL": "notice",
    "RESOLVE_UPDATE": "resolve",
    "STATE_QUERY": "state",
    "FETCH_ORDER_ACTIVITY": "sisbajud-fetch-order",
    "BEGIN_REVISION_ACTIVITY": "sisbajud-begin-revision",
    "CHECK_OWNERSHIP_ACTIVITY": "sisbajud-check-ownership",
    "QUEUE_RESULT_ACTIVITY": "sisbajud-queue-result",
    "SETTLE_ACTIVITY": "sisbajud-settle",
    "PLAN_BLOCK_ACTIVITY": "sisbajud-plan-block",
    "PLAN_RELEASE_ACTIVITY": "sisbajud-plan-release",
    "PLAN_INFO_ACTIVITY": "sisbajud-plan-info",
    "ENSURE_BLOCK_ACCOUNT_ACTIVITY": "sisbajud-ensure-block-account",
    "WRITE_LEDGER_ACTIVITY": "sisbajud-write-ledger",
    "RECONCILE_WRITE_ACTIVITY": "sisbajud-reconcile-write",
    "RESOLUTION_LEGS_ACTIVITY": "sisbajud-resolution-legs",
    "STAGE_INGEST_ACTIVITY": "sisbajud-stage-ingest",
    "STAGE_ORPHANS_ACTIVITY": "sisbajud-stage-orphans",
    "STAGE_MONITOR_ACTIVITY": "sisbajud-stage-monitor",
    "STAGE_DRAIN_ACTIVITY": "sisbajud-stage-drain",
}


def test_the_published_names_keep_their_values():
    assert {key: getattr(names, key) for key in PUBLISHED} == PUBLISHED
    assert names.stage_task_queue("sisbajud-v1") == "sisbajud-v1-stages"


def test_every_activity_is_registered_under_a_contract_name():
    registered = {
        activity._Definition.must_from_callable(method).name
        for cls in (OrderActivities, PlanActivities, WriteActivities, ReconcileActivities,
                    ResolutionActivities, TickActivities)
        for method in vars(cls).values() if activity._Definition.from_callable(method)
    }
    contract = {value for key, value in PUBLISHED.items() if key.endswith("_ACTIVITY")}
    assert registered == contract


def test_the_workflows_and_their_messages_use_the_contract_names():
    order = workflow._Definition.must_from_class(SisbajudOrderWorkflow)
    assert order.name == names.ORDER_WORKFLOW
    assert set(order.signals) == {names.NOTICE_SIGNAL}
    assert set(order.updates) == {names.RESOLVE_UPDATE}
    assert set(order.queries) == {names.STATE_QUERY}
    assert workflow._Definition.must_from_class(SisbajudTickWorkflow).name == names.TICK_WORKFLOW
