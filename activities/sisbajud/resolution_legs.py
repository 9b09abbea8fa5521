"""What a person's resolution of held money moved, read from the ledger's transaction."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.sisbajud.clients import LedgerActivities
from activities.sisbajud.contracts.errors import SisbajudErrorCode
from activities.sisbajud.contracts.ledger import ResolutionLegs, ResolutionLegsInput
from activities.sisbajud.contracts.names import RESOLUTION_LEGS_ACTIVITY
from activities.sisbajud.contracts.orders import AlarmCode, Effect, Leg, write_idempotency_key
from activities.sisbajud.models import SisbajudWrite
from activities.sisbajud.plans import upstream_errors
from activities.sisbajud.rules import ZERO
from activities.sisbajud.store import raise_alarm
from activities.sisbajud.write_effects import UNRESOLVED_WRITE_STATES
from shared.heartbeat import heartbeats


def moved_legs(tx: dict[str, Any], kind: str, block_alias: str, planned: list[Leg]
               ) -> tuple[list[Leg], Decimal]:
    """The subject's side of `tx` (the accounts a block debited, or a release credited), in
    the ledger's order, and what moved into (or out of) the block account. Midaz marks each
    operation's `direction` (`debit`/`credit`; a block's operations are typed `BLOCK`)."""
    subject_side = "debit" if kind == "block" else "credit"
    totals: dict[str, Decimal] = {}
    ids: dict[str, str | None] = {}
    held = ZERO
    for op in tx.get("operations") or []:
        direction = str(op.get("direction") or op.get("type") or "").lower()
        value = Decimal(str((op.get("amount") or {}).get("value") or 0))
        alias = str(op.get("accountAlias") or "")
        if alias == block_alias:
            held += value if direction != subject_side else ZERO
        elif direction == subject_side:
            totals[alias] = totals.get(alias, ZERO) + value
            ids.setdefault(alias, op.get("accountId"))
    # An account the plan did not name may be a salary account: a release to it goes to a
    # person, as one to a known salary account does.
    salary = {leg.account_alias: leg.salary for leg in planned}
    legs = [Leg(account_alias=alias, amount=amount, account_id=ids[alias],
                salary=salary.get(alias, True)) for alias, amount in totals.items()]
    return legs, held


class ResolutionActivities(LedgerActivities):
    """Checks a person's resolution of held money against the ledger before it is taken."""

    @activity.defn(name=RESOLUTION_LEGS_ACTIVITY)
    @heartbeats
    async def resolution_legs(self, request: ResolutionLegsInput) -> ResolutionLegs:
        """`GET …/transactions/{id}` of a FULL/PARTIAL resolution of a write still without a
        known effect: the legs its operations moved. Midaz not showing the transaction (or not
        its operations) raises `ledger.resolution-unproven`; the resolution is not taken."""
        if request.effect not in (Effect.FULL, Effect.PARTIAL) or not request.transaction_id:
            return ResolutionLegs()
        key = write_idempotency_key(request.order_id, request.revision)
        async with self._sessions() as session:
            write = await session.get(SisbajudWrite, key)
        if write is None or write.state not in UNRESOLVED_WRITE_STATES:
            return ResolutionLegs()
        try:
            with upstream_errors():
                tx = await self._midaz(write.institution_id).transaction(
                    request.transaction_id)
        except ApplicationError as exc:
            if exc.type != SisbajudErrorCode.MIDAZ_READ_REFUSED:
                raise  # unavailable: Temporal tries again
            tx, why = None, exc.message
        else:
            why = f"Midaz does not show transaction {request.transaction_id}"
        planned = [Leg.model_validate(leg) for leg in write.legs]
        legs, held = moved_legs(tx, write.kind, write.block_alias, planned) if tx else ([], ZERO)
        if tx is not None and legs:
            moved = sum((leg.amount for leg in legs), ZERO)
            if moved != held or moved != request.executed_amount:
                return ResolutionLegs(problem=(
                    f"transaction {request.transaction_id} moved {moved} to or from the "
                    f"accounts and {held} on {write.block_alias}; the resolution says "
                    f"{request.executed_amount}"))
            return ResolutionLegs(legs=legs)
        if tx is not None:
            why = (f"transaction {request.transaction_id} shows no operation on the accounts "
                   f"of write {key}")
        async with self._sessions() as session:
            await raise_alarm(session, AlarmCode.LEDGER_RESOLUTION_UNPROVEN.value,
                              f"Order {request.order_id} r{request.revision}: a resolution "
                              f"of held money names transaction {request.transaction_id}, "
                              f"but {why}; the decision stays open",
                              order_id=request.order_id, revision=request.revision,
                              transaction_id=request.transaction_id)
            await session.commit()
        return ResolutionLegs(problem=why)
