"""Contract of the `sisbajud` domain's ledger steps: plans, block accounts, writes."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from activities.sisbajud.contracts.orders import Effect, HumanReason, Leg, Order, ReasonCode


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class PlanInput(_Frozen):
    """Read what an operation needs from the ledger and the store; nothing is written."""

    order: Order


class PlanKind(StrEnum):
    """What a plan tells the workflow to do."""

    WRITE = "WRITE"
    RESOLVE = "RESOLVE"
    WAIT_PARENT = "WAIT_PARENT"
    HUMAN = "HUMAN"


class Plan(_Frozen):
    """A write to send, or an answer that needs none."""

    kind: PlanKind
    legs: list[Leg] = Field(default_factory=list)
    total: Decimal = Decimal(0)
    open_amount: Decimal = Decimal(0)
    block_alias: str | None = None
    effect: Effect | None = None
    reason_code: ReasonCode | None = None
    human_reason: HumanReason | None = None
    blockable_total: Decimal | None = None
    blockable_salary_total: Decimal | None = None
    detail: str = ""


class WriteKind(StrEnum):
    """Which Midaz create route a write uses."""

    BLOCK = "block"
    UNBLOCK = "unblock"


class EnsureBlockAccountInput(_Frozen):
    """Find or create the order's block account (serialised per order by its workflow)."""

    institution_id: str
    alias: str


class BlockAccountResult(_Frozen):
    """The block account's id, and whether this call created it."""

    account_id: str
    created: bool


class WriteInput(_Frozen):
    """One ledger write: the key and body stay the same on every attempt."""

    order: Order
    kind: WriteKind
    idempotency_key: str
    block_alias: str
    legs: list[Leg]
    total: Decimal
    parent_order_id: str | None = None


class WriteOutcomeKind(StrEnum):
    """Proof of effect, proof of no effect, neither, or held back by its routing config."""

    APPLIED = "APPLIED"
    REJECTED = "REJECTED"
    INDETERMINATE = "INDETERMINATE"
    # Nothing was applied because of accounting-route configuration: send again later.
    DEFERRED = "DEFERRED"


class WriteOutcome(_Frozen):
    """How Midaz answered a write."""

    kind: WriteOutcomeKind
    http_status: int | None = None
    code: str | None = None
    transaction_id: str | None = None
    amount: Decimal | None = None
    replayed: bool = False
    overdraft_touched: bool = False
    retry_with_new_plan: bool = False
    detail: str = ""


class ReconcileWriteInput(_Frozen):
    """Look for the transactions of one write (`?metadata.code=<key>`) since it was sent."""

    institution_id: str
    idempotency_key: str
    block_alias: str
    since: datetime


class ReconcileResult(_Frozen):
    """Proof of effect when a transaction carries the key; `evidence` changes when the
    ledger around the write changes (to count unchanged heartbeats)."""

    found: bool
    transaction_id: str | None = None
    amount: Decimal | None = None
    overdraft_touched: bool = False
    evidence: str = ""
    # The proof came after a person's decision was registered: it is recorded on the
    # decision for the people to resolve, and the write stays without a known effect.
    for_decision: bool = False


class ResolutionLegsInput(_Frozen):
    """A person's resolution of held money, to be checked against the ledger's transaction."""

    order_id: str
    revision: int
    effect: Effect
    executed_amount: Decimal | None = None
    transaction_id: str | None = None


class ResolutionLegs(_Frozen):
    """The legs the resolution's transaction moved (None: no write of the revision waits for
    an effect); `problem`: why the ledger does not bear the resolution out."""

    legs: list[Leg] | None = None
    problem: str | None = None
