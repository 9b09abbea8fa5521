"""Names of the `sisbajud` domain on Temporal: workflow types, activities, messages, queues."""

from __future__ import annotations

TASK_QUEUE = "sisbajud-v1"
# The tick's stage activities poll a queue of their own beside the orders' one.
STAGE_QUEUE_SUFFIX = "-stages"

ORDER_WORKFLOW = "sisbajud-order"
TICK_WORKFLOW = "sisbajud-tick"

# The order workflow's messages.
NOTICE_SIGNAL = "notice"
RESOLVE_UPDATE = "resolve"
STATE_QUERY = "state"

# Activities of the order workflow.
FETCH_ORDER_ACTIVITY = "sisbajud-fetch-order"
BEGIN_REVISION_ACTIVITY = "sisbajud-begin-revision"
CHECK_OWNERSHIP_ACTIVITY = "sisbajud-check-ownership"
QUEUE_RESULT_ACTIVITY = "sisbajud-queue-result"
SETTLE_ACTIVITY = "sisbajud-settle"
PLAN_BLOCK_ACTIVITY = "sisbajud-plan-block"
PLAN_RELEASE_ACTIVITY = "sisbajud-plan-release"
PLAN_INFO_ACTIVITY = "sisbajud-plan-info"
ENSURE_BLOCK_ACCOUNT_ACTIVITY = "sisbajud-ensure-block-account"
WRITE_LEDGER_ACTIVITY = "sisbajud-write-ledger"
RECONCILE_WRITE_ACTIVITY = "sisbajud-reconcile-write"
RESOLUTION_LEGS_ACTIVITY = "sisbajud-resolution-legs"

# The tick's stages.
STAGE_INGEST_ACTIVITY = "sisbajud-stage-ingest"
STAGE_ORPHANS_ACTIVITY = "sisbajud-stage-orphans"
STAGE_MONITOR_ACTIVITY = "sisbajud-stage-monitor"
STAGE_DRAIN_ACTIVITY = "sisbajud-stage-drain"


def stage_task_queue(task_queue: str) -> str:
    """The queue the tick's stage activities are polled on, beside the orders' queue."""
    return f"{task_queue}{STAGE_QUEUE_SUFFIX}"
