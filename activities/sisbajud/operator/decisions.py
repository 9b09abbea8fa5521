"""Human decisions: the list, and a person's resolution (two people when money moves)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import update
from sqlmodel import col, select
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from activities.sisbajud.contracts.errors import SisbajudApiErrorCode, sisbajud_error
from activities.sisbajud.contracts.names import RESOLVE_UPDATE
from activities.sisbajud.contracts.orders import (
    Effect,
    HumanDisposition,
    ResolveDecisionInput,
    ResolveDecisionResult,
    order_workflow_id,
)
from activities.sisbajud.models import SisbajudHumanDecision
from activities.sisbajud.operator.payloads import ResolutionIn
from activities.sisbajud.store import DOMAIN
from shared.db.engine import Sessions
from shared.db.models import as_utc, utcnow
from shared.errors import ErrorCode, EsteiraError
from shared.events import record_event
from shared.paging import Page, after, bounded, page_of
from shared.temporal import TemporalHandle

DECISION_NOT_OPEN = SisbajudApiErrorCode.DECISION_NOT_OPEN
# The order's workflow is gone or no longer waits: nothing a retry of this call would fix.
GONE = (RPCStatusCode.NOT_FOUND, RPCStatusCode.FAILED_PRECONDITION)
# The actors that name a person (the API key names none).
NAMED_PREFIX = "operator:"


@dataclass(frozen=True)
class Decision:
    """An order handed to a person, and what became of it (`human_disposition` is the seed's
    `humanDisposition`; `ledger_proof` a re-read's proof found after it was registered)."""

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

    @classmethod
    def of(cls, row: SisbajudHumanDecision) -> Decision:
        """The decision a row records."""
        assert row.id is not None
        return cls(id=row.id, order_id=row.order_id, revision=row.revision, reason=row.reason,
                   human_disposition=row.disposition, detail=row.detail,
                   open=row.resolved_at is None, created_at=row.created_at,
                   resolved_at=row.resolved_at, resolved_by=row.resolved_by,
                   resolution_reason=row.resolution_reason, resolution=row.resolution,
                   proposed_by=row.proposed_by, proposed_at=row.proposed_at,
                   proposal_reason=row.proposal_reason, proposal=row.proposal,
                   proof_found_at=row.proof_found_at, ledger_proof=row.ledger_proof,
                   decide_by=as_utc(row.decide_by) if row.decide_by else None)


@dataclass(frozen=True)
class Proposed:
    """The first person's resolution, recorded; nothing reached the order yet."""

    decision_id: int
    order_id: str
    revision: int
    proposed_by: str
    status: Literal["proposed"] = "proposed"


@dataclass(frozen=True)
class Resolved:
    """The order's wait ended with this final result (`result_key`: its outbox key)."""

    order_id: str
    revision: int
    result_key: str
    resolved_by: str
    status: Literal["resolved"] = "resolved"


def moves_money(row: SisbajudHumanDecision, body: ResolutionIn) -> bool:
    """Held money, or a resolution saying money was blocked or freed: two people decide."""
    return (row.disposition == HumanDisposition.HELD_MONEY_MOVED
            or body.effect in (Effect.FULL, Effect.PARTIAL))


def _known_effect(row: SisbajudHumanDecision, body: ResolutionIn) -> None:
    """Held money that moved becomes the write's known effect, which a later release
    returns: it needs the amount and the ledger transaction that moved it."""
    if (row.disposition == HumanDisposition.HELD_MONEY_MOVED
            and body.effect in (Effect.FULL, Effect.PARTIAL)
            and (not body.executed_amount or not body.transaction_id)):
        raise EsteiraError(ErrorCode.REQUEST_INVALID,
                           f"Decision {row.id} holds money: a {body.effect.value} resolution "
                           "needs executedAmount (> 0) and the ledger's transactionId.")


def _named(actor: str) -> None:
    """Two people means two named ones: the shared API key could be either of them."""
    if not actor.startswith(NAMED_PREFIX):
        raise sisbajud_error(SisbajudApiErrorCode.OPERATOR_INVALID,
                             "A resolution that moves or frees money needs a named operator's "
                             "credential (Authorization: Basic, or a dashboard session).")


def _confirming(row: SisbajudHumanDecision, body: ResolutionIn, actor: str) -> str:
    """The attribution of a confirmed resolution (409 when the proposer confirms, or when the
    confirmation says something else than the proposal)."""
    if actor == row.proposed_by:
        raise sisbajud_error(SisbajudApiErrorCode.SAME_ACTOR,
                             f"Decision {row.id} was proposed by {actor}; another person must "
                             "confirm it.")
    if row.proposal != body.decided():
        raise sisbajud_error(SisbajudApiErrorCode.PROPOSAL_MISMATCH,
                             f"Decision {row.id} was proposed as {row.proposal}; confirm that "
                             "or have the proposal withdrawn.")
    return f"{actor}, confirming {row.proposed_by}"


class Decisions:
    """The orders waiting for a person, and the people's resolutions of them."""

    def __init__(self, sessions: Sessions, temporal: TemporalHandle) -> None:
        self._sessions = sessions
        self._temporal = temporal

    async def list(self, open: bool | None, limit: int,
                   cursor: str | None = None) -> Page[Decision]:
        """Orders waiting for (or decided by) a person, newest first; `open=True` for the
        waiting."""
        limit = bounded(limit)
        statement = after(select(SisbajudHumanDecision), [col(SisbajudHumanDecision.id)],
                          cursor, kinds=(int,)).limit(limit + 1)
        if open is not None:
            column = col(SisbajudHumanDecision.resolved_at)
            statement = statement.where(column.is_(None) if open else column.is_not(None))
        async with self._sessions() as session:
            rows = (await session.exec(statement)).all()
        page = page_of(rows, limit, lambda row: (row.id,))
        return Page([Decision.of(row) for row in page.items], page.next_cursor)

    async def resolve(self, decision_id: int, body: ResolutionIn,
                      actor: str) -> Proposed | Resolved:
        """End the order's wait with this final result; it goes out through the outbox once.
        A resolution that moves or frees money is first proposed, then confirmed by a
        different person (409 `sisbajud.same-actor` for the same one); both must be named
        operators (401 `sisbajud.operator-invalid` for the shared API key)."""
        if body.actor is not None and body.actor != actor:
            raise sisbajud_error(SisbajudApiErrorCode.ACTOR_NOT_CREDENTIAL,
                                 f"The actor is {actor}, from the credential; leave `actor` "
                                 "out.")
        async with self._sessions() as session:
            row = await session.get(SisbajudHumanDecision, decision_id)
        if row is None:
            raise EsteiraError(ErrorCode.NOT_FOUND, f"No human decision {decision_id}.")
        if row.resolved_at is not None:
            raise sisbajud_error(DECISION_NOT_OPEN, f"Decision {decision_id} was already "
                                 f"resolved by {row.resolved_by}.")
        if row.proposed_by is not None or moves_money(row, body):
            _named(actor)
        _known_effect(row, body)
        if row.proposed_by is None and moves_money(row, body):
            return await self._propose(row, body, actor)
        if row.proposed_by is not None:
            actor = _confirming(row, body, actor)
        done = await self._end_wait(row, ResolveDecisionInput(
            revision=row.revision, effect=body.effect, reason_code=body.reason_code,
            executed_amount=body.executed_amount, transaction_id=body.transaction_id,
            actor=actor, reason=body.reason))
        return Resolved(done.order_id, done.revision, done.result_key, actor)

    async def _propose(self, row: SisbajudHumanDecision, body: ResolutionIn,
                       actor: str) -> Proposed:
        """Record the first person's resolution; nothing reaches the order until a second."""
        assert row.id is not None
        async with self._sessions() as session:
            claimed = await session.exec(update(SisbajudHumanDecision).where(  # type: ignore[call-overload]
                SisbajudHumanDecision.id == row.id,
                col(SisbajudHumanDecision.proposed_by).is_(None),
                col(SisbajudHumanDecision.resolved_at).is_(None),
            ).values(proposed_by=actor, proposed_at=utcnow(), proposal_reason=body.reason,
                     proposal=body.decided()))
            if not claimed.rowcount:
                raise sisbajud_error(DECISION_NOT_OPEN, f"Decision {row.id} changed meanwhile; "
                                     "read it again.")
            await record_event(session, domain=DOMAIN, type="HumanDecisionProposed",
                               message=f"Order {row.order_id} r{row.revision}: resolution "
                                       f"proposed by {actor}, waiting for a second person",
                               actor=actor, order_id=row.order_id, revision=row.revision,
                               decision_id=row.id, reason=body.reason,
                               proposal=body.decided())
            await session.commit()
        return Proposed(row.id, row.order_id, row.revision, actor)

    async def _end_wait(self, row: SisbajudHumanDecision,
                        resolution: ResolveDecisionInput) -> ResolveDecisionResult:
        """The order workflow's resolve update (409 when it no longer waits for this)."""
        try:
            client = await self._temporal()
            handle = client.get_workflow_handle(order_workflow_id(row.order_id))
            return await handle.execute_update(RESOLVE_UPDATE, resolution,
                                               result_type=ResolveDecisionResult)
        except WorkflowUpdateFailedError as exc:
            cause = exc.cause
            if (isinstance(cause, ApplicationError)
                    and cause.type == SisbajudApiErrorCode.TRANSACTION_UNPROVEN):
                dropped = await self._drop_proposal(row, cause.message)
                raise sisbajud_error(SisbajudApiErrorCode.TRANSACTION_UNPROVEN,
                                     f"Decision {row.id} stays open: {cause.message}{dropped}"
                                     ) from exc
            raise sisbajud_error(DECISION_NOT_OPEN, f"Order {row.order_id} r{row.revision} "
                                 f"does not wait for this decision: {exc.cause}") from exc
        except RPCError as exc:
            if exc.status in GONE:
                raise sisbajud_error(DECISION_NOT_OPEN, f"Order {row.order_id} no longer "
                                     "waits for a decision.") from exc
            raise EsteiraError(ErrorCode.TEMPORAL_UNAVAILABLE,
                               "Temporal is unavailable.") from exc

    async def _drop_proposal(self, row: SisbajudHumanDecision, why: str) -> str:
        """The ledger does not bear the proposal out: it is dropped (else nobody could confirm
        anything else), with an event; the people propose again."""
        if row.proposed_by is None:
            return ""
        async with self._sessions() as session:
            dropped = await session.exec(update(SisbajudHumanDecision).where(  # type: ignore[call-overload]
                SisbajudHumanDecision.id == row.id,
                SisbajudHumanDecision.proposed_by == row.proposed_by,
                col(SisbajudHumanDecision.resolved_at).is_(None),
            ).values(proposed_by=None, proposed_at=None, proposal_reason=None, proposal=None))
            if dropped.rowcount:
                await record_event(session, domain=DOMAIN, type="HumanDecisionProposalDropped",
                                   message=f"Order {row.order_id} r{row.revision}: the "
                                           f"proposal by {row.proposed_by} is dropped: {why}",
                                   order_id=row.order_id, revision=row.revision,
                                   decision_id=row.id, proposed_by=row.proposed_by, reason=why)
            await session.commit()
        return f"; the proposal by {row.proposed_by} is dropped, propose again"
