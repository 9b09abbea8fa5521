"""A write without proof takes the effect a person's confirmed resolution gave it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import update
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.sisbajud.contracts.orders import Effect, Leg, write_idempotency_key
from activities.sisbajud.models import SisbajudWrite
from activities.sisbajud.store import DOMAIN
from shared.db.models import utcnow
from shared.events import record_event

# Write states a person's resolution settles (an APPLIED write has the ledger's own answer).
UNRESOLVED_WRITE_STATES = ("PENDING", "INDETERMINATE", "DEFERRED")


async def resolve_write(session: AsyncSession, order_id: str, revision: int, effect: Effect,
                        amount: Decimal | None, transaction_id: str | None,
                        actor: str, legs: list[Leg] | None = None) -> bool:
    """FULL/PARTIAL: APPLIED with that amount and transaction and the legs the ledger shows
    it moved (a later release returns the money along them); NONE: NO_EFFECT. Who and when
    are kept, the uncertain-write gauge no longer counts it, and an event tells; in the
    caller's transaction. True when a write changed."""
    moved = effect in (Effect.FULL, Effect.PARTIAL)
    text = str(amount) if amount is not None else None
    values: dict[str, Any] = {"state": "APPLIED" if moved else "NO_EFFECT",
                              "resolved_by": actor, "resolved_at": utcnow(),
                              "updated_at": utcnow()}
    if moved:
        values.update(transaction_id=transaction_id, applied_amount=text)
        if legs is not None:
            values.update(applied_legs=[leg.model_dump(mode="json") for leg in legs])
    key = write_idempotency_key(order_id, revision)
    changed = await session.exec(update(SisbajudWrite).where(  # type: ignore[call-overload]
        SisbajudWrite.idempotency_key == key,
        SisbajudWrite.state.in_(UNRESOLVED_WRITE_STATES),  # type: ignore[attr-defined]
    ).values(**values))
    if not changed.rowcount:
        return False
    await record_event(session, domain=DOMAIN, type="LedgerWriteResolved",
                       message=f"Write {key}: {effect.value} {text or ''} per {actor}",
                       actor=actor, order_id=order_id, revision=revision, key=key,
                       effect=effect.value, amount=text, transaction_id=transaction_id)
    return True
