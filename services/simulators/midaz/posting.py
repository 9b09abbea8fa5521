"""Posting a transaction: resolve legs, validate them, move balances atomically."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from decimal import Decimal

from services.simulators.midaz.errors import MidazError
from services.simulators.midaz.model import ZERO, Balance, Operation, uuid7
from services.simulators.midaz.schemas import CreateTransaction, LegIn

# Operation type written for each create route (direction stays debit/credit).
OPERATION_TYPES = {"block": ("BLOCK", "BLOCK"), "unblock": ("UNBLOCK", "UNBLOCK")}
DEFAULT_TYPES = ("DEBIT", "CREDIT")


@dataclass
class Leg:
    """A resolved leg: which balance, how much, and from which side."""

    spec: LegIn
    value: Decimal
    side: str  # "source" | "destination"
    balance: Balance | None = None


def resolve_legs(kind: str, body: CreateTransaction) -> list[Leg]:
    """Turn `send` into legs with concrete values (0009 / 0072 / 0073 / 0125 / 0090)."""
    send = body.send
    external = LegIn(accountAlias=f"@external/{send.asset}", remaining="")
    if kind == "inflow":
        if send.source is not None:
            raise MidazError("0053", fields={"send.source": "unexpected field"})
        sources = [external]
    elif send.source is None:
        raise MidazError("0009", fields={"send.source": "send.source is a required field"})
    else:
        sources = send.source.from_
    if kind == "outflow":
        if send.distribute is not None:
            raise MidazError("0053", fields={"send.distribute": "unexpected field"})
        destinations = [external]
    elif send.distribute is None:
        raise MidazError("0009", fields={"send.distribute": "send.distribute is a required field"})
    else:
        destinations = send.distribute.to
    legs = _values(sources, send.value, "from", "source")
    legs += _values(destinations, send.value, "to", "destination")
    src = {(leg.spec.accountAlias, leg.spec.balanceKey) for leg in legs if leg.side == "source"}
    if any(
        (leg.spec.accountAlias, leg.spec.balanceKey) in src
        for leg in legs
        if leg.side == "destination"
    ):
        raise MidazError("0090")
    return legs


def _values(specs: list[LegIn], total: Decimal, field: str, side: str) -> list[Leg]:
    legs: list[Leg] = []
    remaining: Leg | None = None
    for spec in specs:
        kinds = [spec.amount is not None, spec.share is not None, spec.remaining is not None]
        if sum(kinds) != 1:
            raise MidazError("0072", field)
        leg = Leg(spec, ZERO, side)
        if spec.amount is not None:
            leg.value = spec.amount.value
        elif spec.share is not None:
            share = total * spec.share.percentage / 100
            if spec.share.percentageOfPercentage is not None:
                share = share * spec.share.percentageOfPercentage / 100
            leg.value = share
        elif remaining is not None:
            raise MidazError("0072", field)
        else:
            remaining = leg
        legs.append(leg)
    if remaining is not None:
        remaining.value = total - sum((leg.value for leg in legs), ZERO)
    if sum((leg.value for leg in legs), ZERO) != total:
        raise MidazError("0073")
    if any(leg.value <= 0 for leg in legs):
        raise MidazError("0125")
    return legs


def check_balances(legs: list[Leg], asset: str, lookup: dict[str, Balance]) -> None:
    """Attach balances and apply Midaz's balance rules (0168 / 0019 / 0034 / 0024)."""
    for leg in legs:
        if leg.spec.balanceKey == "overdraft":
            raise MidazError("0168")
        balance = lookup.get(leg.spec.accountAlias)
        if balance is None or leg.spec.balanceKey != balance.key:
            raise MidazError("0019", entity_type="validateBalance")
        if balance.account.asset_code != asset or (
            leg.spec.amount is not None and leg.spec.amount.asset != asset
        ):
            raise MidazError("0034", entity_type="validateBalance")
        allowed = balance.allow_sending if leg.side == "source" else balance.allow_receiving
        if not allowed or balance.account.blocked:
            raise MidazError("0024", entity_type="validateBalance")
        leg.balance = balance


def apply(legs: list[Leg], kind: str, tx_id: str, now: float, visible_at: float) -> list[Operation]:
    """Move balances for all legs or none (0018 / 0167) and return the operations."""
    work: dict[str, tuple[Decimal, Decimal]] = {}
    plan: list[tuple[Leg, Decimal, Decimal, Decimal]] = []  # leg, avail, used, overdraft delta
    ordered = [leg for leg in legs if leg.side == "source"]
    ordered += [leg for leg in legs if leg.side == "destination"]
    for leg in ordered:
        bal = leg.balance
        assert bal is not None
        avail, used = work.get(bal.id, (bal.available, bal.overdraft_used))
        delta = ZERO
        if leg.side == "source":
            avail -= leg.value
            if avail < 0 and bal.direction == "credit":
                # Own funds exhausted: refuse, or borrow from the overdraft (floor at 0).
                if not bal.allow_overdraft:
                    raise MidazError("0018", entity_type="validateBalance")
                delta = -avail
                if bal.overdraft_limit is not None and used + delta > bal.overdraft_limit:
                    raise MidazError("0167", entity_type="validateBalance")
                used, avail = used + delta, ZERO
        else:
            # Credits repay overdraft usage before reaching available (assumed; not read in Midaz).
            delta = min(used, leg.value)
            used -= delta
            avail += leg.value - delta
        work[bal.id] = (avail, used)
        plan.append((leg, avail, used, delta))
    debit_type, credit_type = OPERATION_TYPES.get(kind, DEFAULT_TYPES)
    operations: list[Operation] = []
    for leg, avail, used, delta in plan:
        bal = leg.balance
        assert bal is not None
        before = bal.snapshot()
        bal.available, bal.overdraft_used = avail, used
        bal.version += 1
        bal.updated_at = now
        after = bal.snapshot()
        direction = "debit" if leg.side == "source" else "credit"
        op_type = debit_type if leg.side == "source" else credit_type
        operations.append(
            _operation(
                leg, bal, tx_id, op_type, direction, leg.value, before, after, now, visible_at
            )
        )
        if delta > 0:
            # The companion a real Midaz emits on the system "overdraft" balance.
            companion = _operation(
                leg, bal, tx_id, "OVERDRAFT", direction, delta, before, after, now, visible_at
            )
            companion.balance_key = "overdraft"
            companion.balance_id = str(uuid.uuid5(uuid.NAMESPACE_URL, bal.id + "/overdraft"))
            operations.append(companion)
    return operations


def _operation(
    leg: Leg,
    bal: Balance,
    tx_id: str,
    op_type: str,
    direction: str,
    value: Decimal,
    before: dict,
    after: dict,
    now: float,
    visible_at: float,
) -> Operation:
    return Operation(
        id=uuid7(),
        transaction_id=tx_id,
        account=bal.account,
        balance_id=bal.id,
        type=op_type,
        direction=direction,
        amount=value,
        before=before,
        after=after,
        created_at=now,
        visible_at=visible_at,
        description=leg.spec.description,
        chart_of_accounts=leg.spec.chartOfAccounts,
        route_id=leg.spec.routeId,
        metadata=leg.spec.metadata,
    )
