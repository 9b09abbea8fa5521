"""Ledger proof found after a person's decision was registered: shown to them, not acted on."""

from __future__ import annotations

from typing import Any

from sqlalchemy import update
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.contracts.ledger import ReconcileResult
from activities.sisbajud.contracts.orders import HumanDisposition
from activities.sisbajud.models import SisbajudHumanDecision, SisbajudWrite
from activities.sisbajud.store import DOMAIN
from activities.sisbajud.wire import money
from shared.db.models import utcnow
from shared.events import record_event


def proof_body(proof: ReconcileResult) -> dict[str, Any]:
    """What the decision shows of the proof (camelCase, amounts as money strings)."""
    return {"transactionId": proof.transaction_id,
            "amount": money(proof.amount) if proof.amount is not None else None,
            "overdraftTouched": proof.overdraft_touched, "evidence": proof.evidence}


async def record_proof(session: AsyncSession, key: str, proof: ReconcileResult) -> bool:
    """True when the write's revision has an open held-money decision (the seed: once it is
    registered no final answer goes out automatically); the first proof is recorded on it,
    with an event, in the caller's transaction."""
    write = await session.get(SisbajudWrite, key)
    if write is None:
        return False
    decision = (await session.exec(select(SisbajudHumanDecision).where(
        SisbajudHumanDecision.order_id == write.order_id,
        SisbajudHumanDecision.revision == write.revision,
        SisbajudHumanDecision.disposition == HumanDisposition.HELD_MONEY_MOVED.value,
        col(SisbajudHumanDecision.resolved_at).is_(None)))).first()
    if decision is None:
        return False
    body = proof_body(proof)
    first = await session.exec(update(SisbajudHumanDecision).where(  # type: ignore[call-overload]
        SisbajudHumanDecision.id == decision.id,
        col(SisbajudHumanDecision.proof_found_at).is_(None),
    ).values(proof_found_at=utcnow(), ledger_proof=body))
    if first.rowcount:
        await record_event(session, domain=DOMAIN, type="HumanDecisionProofFound",
                           message=f"Order {write.order_id} r{write.revision}: the ledger "
                                   f"shows transaction {proof.transaction_id} for write {key} "
                                   f"({body['amount']}); the decision stays with the people",
                           order_id=write.order_id, revision=write.revision,
                           decision_id=decision.id, key=key, **body)
    return True
