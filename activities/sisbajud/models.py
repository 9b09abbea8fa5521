"""Tables of the SISBAJUD executor: notices, orders, ledger writes, outbox, alarms."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, DateTime, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from shared.db.models import utcnow


def _ts(nullable: bool = True, **kwargs: Any) -> Any:
    if nullable:
        return Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=True,
                                                     **kwargs))
    return Field(default_factory=utcnow, sa_column=Column(DateTime(timezone=True),
                                                          nullable=False, **kwargs))


def _json() -> Any:
    return Field(default_factory=dict, sa_column=Column(JSON, nullable=False))


class SisbajudNotice(SQLModel, table=True):
    """One signed delivery from the Streaming Hub, recorded before the gateway answers."""

    __tablename__ = "sisbajud_notices"
    __table_args__ = (Index("ix_sisbajud_notices_state_id", "state", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    # Stable across the Hub's retries: a redelivery is recorded once.
    webhook_id: str = Field(max_length=200, unique=True)
    received_at: datetime = _ts(nullable=False)
    order_id: str | None = Field(default=None, max_length=100, index=True)
    revision: int | None = None
    state: str = Field(max_length=16)  # ACCEPTED | INGESTED | DUPLICATE | PARKED
    reason: str | None = None
    body: str | None = None  # kept only for parked deliveries (truncated)
    # SHA-256 of the signed body: the same webhook-id with another body is an alarm.
    body_sha256: str | None = Field(default=None, max_length=64)
    skew_s: int | None = None
    skewed: bool = False
    secret_index: int | None = None
    ingested_at: datetime | None = _ts()


class SisbajudOrder(SQLModel, table=True):
    """The operator's view of an order: latest revision begun and where it stands."""

    __tablename__ = "sisbajud_orders"

    order_id: str = Field(primary_key=True, max_length=100)
    revision: int = 0
    run_id: str | None = Field(default=None, max_length=100)
    operation: str | None = Field(default=None, max_length=32)
    institution_id: str | None = Field(default=None, max_length=100)
    parent_order_id: str | None = Field(default=None, max_length=100, index=True)
    document: str | None = Field(default=None, max_length=32)
    requested_amount: str | None = Field(default=None, max_length=40)
    executed_amount: str | None = Field(default=None, max_length=40)
    state: str = Field(max_length=32, index=True)
    execution_state: str | None = Field(default=None, max_length=32)
    effect: str | None = Field(default=None, max_length=16)
    reason_code: str | None = Field(default=None, max_length=32)
    transaction_id: str | None = Field(default=None, max_length=64)
    deadline: datetime | None = _ts()
    detail: str | None = None
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


class SisbajudWrite(SQLModel, table=True):
    """A ledger write this executor registered before sending (`metadata.code` = key)."""

    __tablename__ = "sisbajud_writes"
    # The orphan check's reads: accounts written inside the window; block_alias: lookups.
    __table_args__ = (Index("ix_sisbajud_writes_updated_at", "updated_at"),
                      Index("ix_sisbajud_writes_block_alias", "block_alias"))

    idempotency_key: str = Field(primary_key=True, max_length=140)
    order_id: str = Field(max_length=100, index=True)
    revision: int
    kind: str = Field(max_length=16)  # block | unblock
    institution_id: str = Field(max_length=100)
    block_alias: str = Field(max_length=100)
    parent_order_id: str | None = Field(default=None, max_length=100, index=True)
    total: str = Field(max_length=40)
    legs: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON,
                                                                             nullable=False))
    state: str = Field(max_length=16)  # PENDING | APPLIED | REJECTED | INDETERMINATE
    transaction_id: str | None = Field(default=None, max_length=64)
    applied_amount: str | None = Field(default=None, max_length=40)
    replayed: bool = False
    attempts: int = 0
    last_status: int | None = None
    last_code: str | None = Field(default=None, max_length=16)
    # A person's confirmed resolution of a write without proof: who said what it did, when
    # (the amount and transaction land in `applied_amount`/`transaction_id`).
    resolved_by: str | None = Field(default=None, max_length=200)
    resolved_at: datetime | None = _ts()
    # The legs the ledger shows that transaction moved (each source account and amount), read
    # from its operations when a person's resolution settles the write: what a release returns
    # along. None: the write's own `legs` moved (Midaz answered it applied).
    applied_legs: list[dict[str, Any]] | None = Field(default=None, sa_column=Column(
        JSON, nullable=True))
    created_at: datetime = _ts(nullable=False)
    updated_at: datetime = _ts(nullable=False)


class SisbajudOutbox(SQLModel, table=True):
    """A result waiting to be (or already) sent to the Mensageria, with its key."""

    __tablename__ = "sisbajud_outbox"
    __table_args__ = (Index("ix_sisbajud_outbox_state_due", "state", "next_attempt_at"),)

    id: int | None = Field(default=None, primary_key=True)
    idempotency_key: str = Field(max_length=160, unique=True)
    order_id: str = Field(max_length=100, index=True)
    revision: int
    payload: dict[str, Any] = _json()
    state: str = Field(max_length=16)  # PENDING | SENT | PARKED
    attempts: int = 0
    created_at: datetime = _ts(nullable=False)
    next_attempt_at: datetime = _ts(nullable=False)
    sent_at: datetime | None = _ts()
    last_status: int | None = None
    last_error: str | None = None


class SisbajudInstitution(SQLModel, table=True):
    """Who owns an institution: the M2M subject of the executor that created it."""

    __tablename__ = "sisbajud_institutions"

    institution_id: str = Field(primary_key=True, max_length=100)
    owner_subject: str = Field(max_length=200)
    created_at: datetime = _ts(nullable=False)


class SisbajudAlarm(SQLModel, table=True):
    """Something an operator must look at (parked delivery, foreign owner, …)."""

    __tablename__ = "sisbajud_alarms"

    id: int | None = Field(default=None, primary_key=True)
    at: datetime = _ts(nullable=False, index=True)
    code: str = Field(max_length=64, index=True)
    order_id: str | None = Field(default=None, max_length=100)
    webhook_id: str | None = Field(default=None, max_length=200)
    message: str
    details: dict[str, Any] = _json()
    # Set once an operator looked at it: who (from the credential), when, and why.
    acknowledged_at: datetime | None = _ts()
    acknowledged_by: str | None = Field(default=None, max_length=200)
    acknowledgement_reason: str | None = None


class SisbajudHumanDecision(SQLModel, table=True):
    """An order handed to a person; `disposition` is the seed's `humanDisposition`."""

    __tablename__ = "sisbajud_human_decisions"
    __table_args__ = (UniqueConstraint("order_id", "revision", "reason",
                                       name="ux_sisbajud_human_decisions_order_reason"),)

    id: int | None = Field(default=None, primary_key=True)
    order_id: str = Field(max_length=100, index=True)
    revision: int
    reason: str = Field(max_length=64)
    disposition: str | None = Field(default=None, max_length=64)
    detail: str | None = None
    created_at: datetime = _ts(nullable=False)
    resolved_at: datetime | None = _ts()
    # Audit trail of the resolution: who (an operator, or `executor` on ledger proof), why,
    # and the final result it sent.
    resolved_by: str | None = Field(default=None, max_length=200)
    resolution_reason: str | None = None
    resolution: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON,
                                                                             nullable=True))
    # A resolution that moves or frees money, proposed by one person and waiting for a
    # second, different one to confirm it (the body of the proposed resolution).
    proposed_at: datetime | None = _ts()
    proposed_by: str | None = Field(default=None, max_length=200)
    proposal_reason: str | None = None
    proposal: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    # The ledger's proof a re-read found after the decision was registered (transaction,
    # amount, evidence): shown to the people who decide, never a decision by itself.
    proof_found_at: datetime | None = _ts()
    ledger_proof: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON,
                                                                               nullable=True))
    # By when a person should decide: the order's deadline minus RESPONSE_DEADLINE_MARGIN
    # (None: the order has no deadline).
    decide_by: datetime | None = _ts()


class SisbajudOrphan(SQLModel, table=True):
    """An operation on a block account whose transaction this executor did not write."""

    __tablename__ = "sisbajud_orphans"

    operation_id: str = Field(primary_key=True, max_length=64)
    transaction_id: str = Field(max_length=64)
    institution_id: str = Field(max_length=100)
    block_alias: str = Field(max_length=100, index=True)
    account_id: str = Field(max_length=64)
    # The transaction's `metadata.code`, None when it has none.
    code: str | None = Field(default=None, max_length=200)
    type: str | None = Field(default=None, max_length=16)
    direction: str | None = Field(default=None, max_length=8)
    amount: str | None = Field(default=None, max_length=40)
    operation_at: datetime | None = _ts()
    found_at: datetime = _ts(nullable=False, index=True)
    # Set once an operator looked at it: who (from the credential), when, and why.
    acknowledged_at: datetime | None = _ts()
    acknowledged_by: str | None = Field(default=None, max_length=200)
    acknowledgement_reason: str | None = None


class SisbajudRoutingDocument(SQLModel, table=True):
    """A Systemplane-style tenant document (`routing.organizations`, `routing.ledger_bindings`)."""

    __tablename__ = "sisbajud_routing_documents"

    key: str = Field(primary_key=True, max_length=64)
    document: dict[str, Any] = _json()
    version: int = 1
    updated_by: str | None = Field(default=None, max_length=200)
    updated_at: datetime = _ts(nullable=False)


class SisbajudOrphanScan(SQLModel, table=True):
    """The orphan check's state (one row): its last clean scan and a run of failures."""

    __tablename__ = "sisbajud_orphan_scan"

    id: int = Field(default=1, primary_key=True)
    # The last clean scan: every block account active inside the window was read up to here.
    recent_until: datetime | None = _ts()
    # No longer used (an earlier scan swept all accounts by alias); kept: dropping is a migration.
    sweep_after: str | None = Field(default=None, max_length=100)
    # Set when a scan first fails (its alarm is raised then), cleared by the next clean scan.
    failing_since: datetime | None = _ts()
    updated_at: datetime = _ts(nullable=False)
