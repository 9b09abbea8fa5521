"""Contract of the `sisbajud` domain: queue, ids, keys, states, inputs and results."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# The names live in `sisbajud_names`; these stay importable from here.
from activities.sisbajud.contracts.names import ORDER_WORKFLOW as ORDER_WORKFLOW
from activities.sisbajud.contracts.names import TASK_QUEUE as TASK_QUEUE
from activities.sisbajud.contracts.names import TICK_WORKFLOW as TICK_WORKFLOW

DOMAIN = "sisbajud"
BLOCK_ALIAS_PREFIX = "@block_sisbajud_"
BLOCK_ACCOUNT_TYPE = "sisbajud_block"
# Midaz keeps a write's idempotency key this long (seed: seven days).
WRITE_TTL_SECONDS = 604_800


def order_workflow_id(order_id: str) -> str:
    """`sisbajud-order:<orderId>`."""
    return f"sisbajud-order:{order_id}"


def tick_schedule_id(task_queue: str = TASK_QUEUE) -> str:
    """`sisbajud-tick`, suffixed by the queue when it is not the standard one."""
    return TICK_WORKFLOW if task_queue == TASK_QUEUE else f"{TICK_WORKFLOW}:{task_queue}"


def write_idempotency_key(order_id: str, revision: int) -> str:
    """`<orderId>:<orderRevision>`: every ledger write of a revision, and its redeliveries."""
    return f"{order_id}:{revision}"


def result_idempotency_key(order_id: str, revision: int, seq: int) -> str:
    """`<orderId>:<orderRevision>:<seq>`: one key per result the revision sends."""
    return f"{order_id}:{revision}:{seq}"


class ProgressStep(StrEnum):
    """A non-final result a revision sends once, named by the last part of its key."""

    ACCEPTED = "accepted"
    EXECUTING = "executing"
    AWAITING_PARENT = "awaiting-parent"
    AWAITING_DEFERRAL = "awaiting-deferral"
    AWAITING_PERSON = "awaiting-person"


def progress_idempotency_key(order_id: str, revision: int, step: ProgressStep) -> str:
    """`<orderId>:<orderRevision>:<step>`, e.g. `…:1:accepted`: sent once per revision."""
    return f"{order_id}:{revision}:{step.value}"


def block_account_alias(order_id: str) -> str:
    """`@block_sisbajud_<32 lowercase hex of the order id>` (ValueError if not a UUID)."""
    return BLOCK_ALIAS_PREFIX + uuid.UUID(order_id).hex


def decision_deadline(deadline: datetime | None, margin_seconds: float) -> datetime | None:
    """When an order still without an answer goes to a person, and so by when a person's
    decision is due: the order's deadline minus `RESPONSE_DEADLINE_MARGIN` (None without a
    deadline)."""
    return deadline - timedelta(seconds=margin_seconds) if deadline is not None else None


def is_uuid(value: str) -> bool:
    """Whether `value` reads as a UUID (Midaz's organization, ledger and account ids)."""
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Operation(StrEnum):
    """The three operations a court order asks for."""

    BLOQUEIO = "BLOQUEIO"
    DESBLOQUEIO = "DESBLOQUEIO"
    INFO = "REQUISICAO_INFORMACAO"


class ExecutionState(StrEnum):
    """`executionState` of a result."""

    ACCEPTED = "ACCEPTED"
    EXECUTING = "EXECUTING"
    MONITORING = "MONITORING"
    RESOLVED = "RESOLVED"
    INDETERMINATE = "INDETERMINATE"
    AWAITING_RECONCILIATION = "AWAITING_RECONCILIATION"


class Effect(StrEnum):
    """`effect` of a result."""

    NONE = "NONE"
    FULL = "FULL"
    PARTIAL = "PARTIAL"
    INDETERMINATE = "INDETERMINATE"


class ReasonCode(StrEnum):
    """`reasonCode` of a result, per operation."""

    BLOCKED_TOTAL = "BLOCKED_TOTAL"
    BLOCKED_PARTIAL = "BLOCKED_PARTIAL"
    NO_BALANCE = "NO_BALANCE"
    NO_CLIENT = "NO_CLIENT"
    UNBLOCKED_TOTAL = "UNBLOCKED_TOTAL"
    UNBLOCKED_PARTIAL = "UNBLOCKED_PARTIAL"
    PARENT_UNRESOLVED = "PARENT_UNRESOLVED"
    NOTHING_TO_RELEASE = "NOTHING_TO_RELEASE"
    INFO_FULFILLED = "INFO_FULFILLED"
    INFO_NON_CLIENT = "INFO_NON_CLIENT"


class OrderState(StrEnum):
    """Where an order stands in this executor (the operator's list)."""

    EXECUTING = "EXECUTING"
    WAITING_PARENT = "WAITING_PARENT"
    RESOLVED = "RESOLVED"
    WITHDRAWN = "WITHDRAWN"
    PARKED = "PARKED"
    FOREIGN_OWNER = "FOREIGN_OWNER"
    HUMAN_DECISION = "HUMAN_DECISION"
    INDETERMINATE = "INDETERMINATE"
    DEFERRED = "DEFERRED"


class AlarmCode(StrEnum):
    """Stable codes of the alarms this domain raises."""

    NOTICE_UNUSABLE = "notice.unusable"
    NOTICE_ID_REUSED = "notice.id-reused"
    ORDER_FETCH_REJECTED = "order.fetch-rejected"
    ORDER_INVALID = "order.invalid"
    INSTITUTION_FOREIGN_OWNER = "institution.foreign-owner"
    LEDGER_READ_FAILED = "ledger.read-failed"
    LEDGER_WRITE_REJECTED = "ledger.write-rejected"
    LEDGER_WRITE_INDETERMINATE = "ledger.write-indeterminate"
    LEDGER_OVERDRAFT_TOUCHED = "ledger.overdraft-touched"
    LEDGER_WRITE_DEFERRED = "ledger.write-deferred"
    LEDGER_ORPHAN_OPERATION = "ledger.orphan-operation"
    ORPHAN_SCAN_FAILED = "ledger.orphan-scan-failed"
    # Tick stage 3: a write without proof whose order workflow was gone (restarted into its
    # monitoring), or is running but no longer beats.
    LEDGER_MONITOR_LOST = "ledger.monitor-lost"
    LEDGER_MONITOR_STUCK = "ledger.monitor-stuck"
    # A person's resolution of held money names a transaction the ledger does not show.
    LEDGER_RESOLUTION_UNPROVEN = "ledger.resolution-unproven"
    RESULT_REJECTED = "result.rejected"


class HumanReason(StrEnum):
    """Why an order waits for a person."""

    INSTITUTION_UNCONFIGURED = "institution.unconfigured"
    PARENT_UNKNOWN_AT_DEADLINE = "parent.unknown-at-deadline"
    SALARY_ACCOUNT_RELEASE = "release.salary-account"
    INFO_AGENCY_GIVEN = "info.agency-given"
    INFO_UNKNOWN_ACCOUNT = "info.unknown-account"
    WRITE_INDETERMINATE = "ledger.write-indeterminate"
    WRITE_DEFERRED_AT_DEADLINE = "routing.deferred-at-deadline"
    # Midaz refused a read the order needs (403, 404, another final 4xx): never retried.
    READ_REFUSED = "ledger.read-refused"


class HumanDisposition(StrEnum):
    """`humanDisposition` of a decision: what the executor holds while a person decides."""

    HELD_MONEY_MOVED = "HELD_MONEY_MOVED"


class Order(_Frozen):
    """A court order as fetched from the Mensageria (wire names mapped to snake case)."""

    order_id: str
    revision: int
    operation: Operation
    institution_id: str
    document: str
    amount: Decimal = Decimal(0)
    agency: str | None = None
    account: str | None = None
    allow_salary_accounts: bool = False
    parent_order_id: str | None = None
    deadline: datetime | None = None
    protocol: str | None = None


class OrderOptions(_Frozen):
    """Durations the order workflow waits out, from settings (short in tests)."""

    fetch_retry_initial_seconds: float = 1.0
    fetch_retry_max_seconds: float = 60.0
    write_heartbeat_timeout_seconds: float = 10.0
    # Plans, the block account, re-reads and the fetch: a lost worker seen within this.
    activity_heartbeat_timeout_seconds: float = 10.0
    parent_poll_seconds: float = 60.0
    parent_wait_max_seconds: float = 86_400.0
    deadline_margin_seconds: float = 3_600.0
    # EXECUTOR_HEARTBEAT_EVERY: also how often a deferred write is tried again.
    heartbeat_every_seconds: float = 300.0
    human_decision_after_beats: int = 3
    # A run waiting this long (in history events) continues as new, carrying its wait.
    continue_as_new_after_events: int = 5_000


class RunOrderInput(_Frozen):
    """Start (or signal-with-start) the workflow of one order."""

    order_id: str
    options: OrderOptions = Field(default_factory=OrderOptions)
    # The previous run's wait when the workflow continues as new (its own state, not for
    # callers: `workflows.sisbajud.carry.Carry` as JSON).
    carry: dict[str, Any] | None = None


class NoticeSignal(_Frozen):
    """An accepted execution notice: this revision of the order should be executed."""

    revision: int
    notice_id: int | None = None


class OrderRunResult(_Frozen):
    """What one run of the order workflow did."""

    order_id: str
    executed: list[int] = Field(default_factory=list)
    last_state: OrderState | None = None


class FetchStatus(StrEnum):
    """The seed's fetch table, reduced to what the workflow does next."""

    FOUND = "FOUND"
    WITHDRAWN = "WITHDRAWN"
    PARKED = "PARKED"


class FetchOrderInput(_Frozen):
    """`GET /v1/sisbajud/execution/orders/{orderId}`."""

    order_id: str


class FetchOrderResult(_Frozen):
    """The order, or why there is none (retryable answers never come back here)."""

    status: FetchStatus
    http_status: int
    order: Order | None = None
    detail: str = ""


class BeginRevisionInput(_Frozen):
    """Claim a revision for execution; `run_id` makes a retried claim succeed again;
    `accepted`: the ACCEPTED result, queued in the claim's transaction when it starts."""

    order: Order
    run_id: str
    accepted: QueueResultInput | None = None


class BeginRevisionResult(_Frozen):
    """False when this or a later revision was already begun by another run."""

    started: bool


class Ownership(StrEnum):
    """Whether this executor may write for an institution."""

    OWNED = "OWNED"
    FOREIGN = "FOREIGN"
    UNCONFIGURED = "UNCONFIGURED"


class CheckOwnershipInput(_Frozen):
    """Check (creating if configured and unknown) an institution's owner."""

    institution_id: str


class OwnershipResult(_Frozen):
    """The verdict and the owner on record."""

    ownership: Ownership
    owner: str | None = None


class ResultPayload(_Frozen):
    """The body of `POST …/execution-results` (rendered camelCase by the sender)."""

    order_id: str
    order_revision: int
    operation: Operation | None = None
    execution_state: ExecutionState
    effect: Effect
    reason_code: ReasonCode | None = None
    requested_amount: Decimal | None = None
    executed_amount: Decimal | None = None
    blockable_total: Decimal | None = None
    blockable_salary_total: Decimal | None = None
    transaction_id: str | None = None
    block_account_alias: str | None = None


class Leg(_Frozen):
    """One account side of a write (a source of a block, a destination of a release)."""

    account_alias: str
    amount: Decimal
    account_id: str | None = None
    salary: bool = False


class ResolveDecisionInput(_Frozen):
    """A person's answer to an open human decision: the final result and who gave it why."""

    revision: int
    effect: Effect
    reason_code: ReasonCode | None = None
    executed_amount: Decimal | None = None
    transaction_id: str | None = None
    actor: str
    reason: str
    # What `transaction_id` moved, as the ledger shows it: filled in by the order's workflow
    # (callers leave it out); what a later release returns along.
    moved_legs: list[Leg] | None = None


class ResolveDecisionResult(_Frozen):
    """The final result queued for the Mensageria, by its key."""

    order_id: str
    revision: int
    result_key: str


class SettleInput(_Frozen):
    """Record where a revision ended: order row, result in the outbox, alarm, human decision."""

    order_id: str
    revision: int
    state: OrderState
    effect: Effect | None = None
    reason_code: ReasonCode | None = None
    executed_amount: Decimal | None = None
    transaction_id: str | None = None
    result: ResultPayload | None = None
    result_key: str | None = None
    alarm: AlarmCode | None = None
    human_reason: HumanReason | None = None
    human_disposition: HumanDisposition | None = None
    # A person's resolution (or, with actor None, the ledger's proof) closes open decisions.
    resolution: ResolveDecisionInput | None = None
    close_decisions: bool = False
    detail: str = ""


class QueueResultInput(_Frozen):
    """Put a progress result in the outbox under its key (a second time does nothing)."""

    result: ResultPayload
    result_key: str


class SettleResult(_Frozen):
    """Whether the store changed (False on a retried or superseded settle)."""

    changed: bool


class StageName(StrEnum):
    """The tick's four stages, in the order they run."""

    INGEST = "ingest"
    ORPHANS = "orphans"
    MONITOR = "monitor"
    DRAIN = "drain"


class TickInput(_Frozen):
    """One execution cycle; `task_queue` is where order workflows are started."""

    task_queue: str = TASK_QUEUE
    options: OrderOptions = Field(default_factory=OrderOptions)
    batch_size: int = 200


class StageResult(_Frozen):
    """What a stage did; `ok=False` when it failed (the others still ran)."""

    stage: StageName
    ok: bool = True
    done: int = 0
    failed: int = 0
    detail: str = ""


class TickResult(_Frozen):
    """Every stage's result, in order."""

    stages: list[StageResult]
