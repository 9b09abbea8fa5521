"""The SISBAJUD operator API's answers on the wire (camelCase), built from the face's values."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from shared.wire import PageOut, WireModel


class SisbajudOrderOut(WireModel):
    """An order: the latest revision begun, where it stands, its effect and reason."""

    order_id: str
    revision: int
    operation: str | None
    institution_id: str | None
    parent_order_id: str | None
    document: str | None
    requested_amount: str | None
    executed_amount: str | None
    state: str
    execution_state: str | None
    effect: str | None
    reason_code: str | None
    transaction_id: str | None
    deadline: datetime | None
    detail: str | None
    created_at: datetime
    updated_at: datetime


class SisbajudWriteOut(WireModel):
    """A ledger write this executor registered before sending (`idempotencyKey` is its
    `metadata.code`)."""

    idempotency_key: str
    order_id: str
    revision: int
    kind: str
    institution_id: str
    block_alias: str
    parent_order_id: str | None
    total: str
    legs: list[dict[str, Any]]
    state: str
    transaction_id: str | None
    applied_amount: str | None
    replayed: bool
    attempts: int
    last_status: int | None
    last_code: str | None
    resolved_by: str | None
    resolved_at: datetime | None
    created_at: datetime
    updated_at: datetime


class SisbajudResultOut(WireModel):
    """A result waiting to be (or already) sent to the Mensageria, with its key."""

    id: int
    idempotency_key: str
    order_id: str
    revision: int
    payload: dict[str, Any]
    state: str
    attempts: int
    created_at: datetime
    next_attempt_at: datetime
    sent_at: datetime | None
    last_status: int | None
    last_error: str | None


class SisbajudOrderDetailOut(SisbajudOrderOut):
    """One order with its ledger writes and the results it queued."""

    writes: list[SisbajudWriteOut]
    results: list[SisbajudResultOut]


class SisbajudNoticeOut(WireModel):
    """One signed delivery from the Streaming Hub as recorded (`body` kept only when
    parked)."""

    id: int
    webhook_id: str
    received_at: datetime
    order_id: str | None
    revision: int | None
    state: str
    reason: str | None
    body: str | None
    body_sha256: str | None
    skew_s: int | None
    skewed: bool
    secret_index: int | None
    ingested_at: datetime | None


class SisbajudAlarmOut(WireModel):
    """Something an operator must look at, and who acknowledged it."""

    id: int
    at: datetime
    code: str
    order_id: str | None
    webhook_id: str | None
    message: str
    details: dict[str, Any]
    acknowledged_at: datetime | None
    acknowledged_by: str | None
    acknowledgement_reason: str | None


class SisbajudOrphanOut(WireModel):
    """An operation on a block account whose transaction this executor did not write."""

    operation_id: str
    transaction_id: str
    institution_id: str
    block_alias: str
    account_id: str
    code: str | None
    type: str | None
    direction: str | None
    amount: str | None
    operation_at: datetime | None
    found_at: datetime
    acknowledged_at: datetime | None
    acknowledged_by: str | None
    acknowledgement_reason: str | None


class SisbajudOutboxPage(PageOut[SisbajudResultOut]):
    """What waits to be sent: `depth` PENDING rows, the oldest's age, rows by state, a page."""

    depth: int
    oldest_age_seconds: float
    counts: dict[str, int]


class SisbajudInstitutionOut(WireModel):
    """A configured or recorded institution, its owner, and whether that is this executor."""

    institution_id: str
    configured: bool
    owner_subject: str | None
    owned_by_this_executor: bool
    created_at: datetime | None
    crm_mode: str | None
    organization_id: str | None
    ledger_id: str | None


class SisbajudInstitutionsPage(PageOut[SisbajudInstitutionOut]):
    """This executor's M2M subject (`EXECUTOR_M2M_SUBJECT`) and a page of institutions."""

    m2m_subject: str = Field(alias="m2mSubject")


class SisbajudDecisionOut(WireModel):
    """An order handed to a person (`humanDisposition` as the seed names it), the proposal
    waiting for a second person, the resolution, a ledger proof found after it."""

    id: int
    order_id: str
    revision: int
    reason: str
    human_disposition: str | None
    detail: str | None
    open: bool
    created_at: datetime
    resolved_at: datetime | None
    resolved_by: str | None
    resolution_reason: str | None
    resolution: dict[str, Any] | None
    proposed_by: str | None
    proposed_at: datetime | None
    proposal_reason: str | None
    proposal: dict[str, Any] | None
    proof_found_at: datetime | None
    ledger_proof: dict[str, Any] | None
    # The order's deadline less the margin: the person's decision is due by then.
    decide_by: datetime | None


class SisbajudProposedOut(WireModel):
    """202: the first person's resolution is recorded and waits for a second person."""

    status: Literal["proposed"]
    decision_id: int
    order_id: str
    revision: int
    proposed_by: str


class SisbajudResolvedOut(WireModel):
    """200: the order's wait ended; `resultKey` is the final result's outbox key."""

    status: Literal["resolved"]
    order_id: str
    revision: int
    result_key: str
    resolved_by: str


SisbajudResolutionOut = Annotated[SisbajudResolvedOut | SisbajudProposedOut,
                                  Field(discriminator="status")]


class SisbajudNoticeRequeuedOut(WireModel):
    """A parked delivery back in ingestion."""

    notice_id: int
    state: str
    actor: str


class SisbajudResultRequeuedOut(WireModel):
    """A parked result due again under its key."""

    result_id: int
    idempotency_key: str
    state: str
    actor: str


class SisbajudOrderRequeuedOut(WireModel):
    """A parked order's revision queued again, carried by notice `noticeId`."""

    order_id: str
    revision: int
    notice_id: int
    actor: str


class SisbajudAcknowledgedOut(WireModel):
    """An alarm (`id` a number) or orphan operation (its operation id) acknowledged."""

    id: int | str
    acknowledged_by: str
    reason: str


class SisbajudRoutingDocumentOut(WireModel):
    """A routing document, its version and who wrote it last."""

    key: str
    document: dict[str, Any]
    version: int
    updated_by: str | None
    updated_at: datetime


class SisbajudConnectionOut(WireModel):
    """One endpoint called now: `ok`, or what to change (`detail` names the setting)."""

    target: str
    url: str
    ok: bool
    detail: str


class SisbajudPreflightOut(WireModel):
    """The routing preflight: `ready` with no problem; problems defer writes, warnings name
    configuration that does nothing; each endpoint's connection check."""

    ready: bool
    systemplane_enabled: bool
    problems: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    connections: list[SisbajudConnectionOut]
