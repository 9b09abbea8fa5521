"""Reading the ledger again for a write without proof: did a transaction carry its key?"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from sqlalchemy import update
from temporalio import activity

from activities.sisbajud.clients import LedgerActivities, MidazClient
from activities.sisbajud.contracts.ledger import ReconcileResult, ReconcileWriteInput
from activities.sisbajud.contracts.names import RECONCILE_WRITE_ACTIVITY
from activities.sisbajud.contracts.orders import Leg
from activities.sisbajud.decision_proof import record_proof
from activities.sisbajud.models import SisbajudWrite
from activities.sisbajud.plans import upstream_errors
from activities.sisbajud.resolution_legs import moved_legs
from shared.db.models import utcnow
from shared.heartbeat import heartbeats

# Midaz compares list dates at day (or second) precision and clocks drift: look a day wider.
DATE_SLACK = timedelta(days=1)


def midaz_day(moment: datetime) -> str:
    """`yyyy-mm-dd` (an `end_date` in this form covers the whole day)."""
    return moment.strftime("%Y-%m-%d")


def midaz_second(moment: datetime) -> str:
    """`yyyy-mm-dd hh:mm:ss`, UTC."""
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _overdraft(tx: dict) -> bool:
    return any(op.get("balanceKey") == "overdraft" or op.get("type") == "OVERDRAFT"
               for op in tx.get("operations") or [])


def _applied_legs(tx: dict, write: SisbajudWrite | None) -> list[dict] | None:
    """The legs the proven transaction moved (a re-planned write may have sent other legs
    than it first registered); None when its operations don't add up to its block leg."""
    if write is None:
        return None
    planned = [Leg.model_validate(leg) for leg in write.legs]
    legs, held = moved_legs(tx, write.kind, write.block_alias, planned)
    if not legs or sum((leg.amount for leg in legs), Decimal(0)) != held:
        return None
    return [leg.model_dump(mode="json") for leg in legs]


class ReconcileActivities(LedgerActivities):
    """The re-read the order workflow does before each heartbeat of an uncertain write."""

    @activity.defn(name=RECONCILE_WRITE_ACTIVITY)
    @heartbeats
    async def reconcile_write(self, request: ReconcileWriteInput) -> ReconcileResult:
        """`?metadata.code=<key>` since the write; a hit is proof and marks the write APPLIED."""
        with upstream_errors():
            midaz = self._midaz(request.institution_id)
            found = await midaz.transactions_by_code(
                request.idempotency_key, midaz_day(request.since - DATE_SLACK),
                midaz_day(utcnow() + DATE_SLACK))
            balance = await midaz.default_balance(request.block_alias)
        held = (balance or {}).get("available", "0")
        ids = sorted(tx["id"] for tx in found)
        evidence = f"transactions={','.join(ids)};block={Decimal(str(held)).normalize()}"
        if not found:
            return ReconcileResult(found=False, evidence=evidence)
        # One key is one write: Midaz never applies a key twice, so the first hit is it.
        tx = found[0]
        amount = Decimal(str(tx.get("amount") or 0))
        if not tx.get("operations"):
            # List entries may omit operations; the overdraft check needs them.
            tx = await self._full(midaz, tx)
        proof = ReconcileResult(found=True, transaction_id=tx["id"], amount=amount,
                                overdraft_touched=_overdraft(tx), evidence=evidence)
        async with self._sessions() as session:
            if await record_proof(session, request.idempotency_key, proof):
                await session.commit()
                return proof.model_copy(update={"for_decision": True})
            write = await session.get(SisbajudWrite, request.idempotency_key)
            await session.exec(update(SisbajudWrite).where(  # type: ignore[call-overload]
                SisbajudWrite.idempotency_key == request.idempotency_key,
                SisbajudWrite.state != "APPLIED",
            ).values(state="APPLIED", transaction_id=tx["id"], applied_amount=str(amount),
                     applied_legs=_applied_legs(tx, write), updated_at=utcnow()))
            await session.commit()
        return proof

    async def _full(self, midaz: MidazClient, tx: dict) -> dict:
        with upstream_errors():
            return await midaz.transaction(tx["id"]) or tx
