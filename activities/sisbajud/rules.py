"""The executor's money rules, free of I/O: eligibility, own funds, allocation, totals."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from typing import Any

from activities.sisbajud.contracts.ledger import Leg

ZERO = Decimal(0)
CENT = Decimal("0.01")


@dataclass(frozen=True)
class SubjectAccount:
    """An active account of the subject, with what a court order may take from it."""

    account_id: str
    alias: str
    own_funds: Decimal
    salary: bool = False
    branch: str | None = None
    number: str | None = None


def own_funds(balance: dict[str, Any] | None) -> Decimal:
    """`available` of the default balance in whole cents (amounts leave with two places, and
    rounding down never takes more than is there); 0 in overdraft (credit limits are not
    own funds)."""
    if balance is None:
        return ZERO
    available = Decimal(str(balance.get("available") or 0))
    if Decimal(str(balance.get("overdraftUsed") or 0)) > 0 or available <= 0:
        return ZERO
    return available.quantize(CENT, rounding=ROUND_DOWN)


def is_active(account: dict[str, Any] | None, instrument: dict[str, Any], asset: str) -> bool:
    """ACTIVE, not blocked, the institution's asset, and not closed in the CRM."""
    if account is None:
        return False
    details = instrument.get("bankingDetails") or {}
    status = (account.get("status") or {}).get("code", "ACTIVE")
    return (status == "ACTIVE" and not account.get("blocked")
            and account.get("assetCode") == asset and not details.get("closingDate"))


def restrict(accounts: Iterable[SubjectAccount], agency: str | None,
             number: str | None) -> list[SubjectAccount]:
    """The order's agency / account restriction (absent fields restrict nothing)."""
    return [a for a in accounts
            if (not agency or a.branch == agency) and (not number or a.number == number)]


def block_legs(accounts: Iterable[SubjectAccount], open_amount: Decimal,
               allow_salary: bool) -> list[Leg]:
    """Take own funds up to `open_amount`, non-salary accounts first, each leg <= its funds."""
    eligible = [a for a in accounts if allow_salary or not a.salary]
    eligible.sort(key=lambda a: a.salary)  # stable: CRM order within each group
    legs: list[Leg] = []
    remaining = open_amount
    for account in eligible:
        if remaining <= 0:
            break
        take = min(account.own_funds, remaining)
        if take > 0:
            legs.append(Leg(account_alias=account.alias, account_id=account.account_id,
                            amount=take, salary=account.salary))
            remaining -= take
    return legs


def release_amount(requested: Decimal, parent_remaining: Decimal,
                   block_balance: Decimal) -> Decimal:
    """The least of what the order asks, what the parent still holds, and the block balance."""
    return max(ZERO, min(requested, parent_remaining, block_balance))


def release_legs(parent_legs: Iterable[Leg], returned: dict[str, Decimal],
                 amount: Decimal) -> list[Leg]:
    """Give `amount` back to the parent's source accounts, in the parent's leg order."""
    held: dict[str, Leg] = {}
    totals: dict[str, Decimal] = {}
    for leg in parent_legs:
        held.setdefault(leg.account_alias, leg)
        totals[leg.account_alias] = totals.get(leg.account_alias, ZERO) + leg.amount
    legs: list[Leg] = []
    remaining = amount
    for alias, leg in held.items():
        if remaining <= 0:
            break
        take = min(totals[alias] - returned.get(alias, ZERO), remaining)
        if take > 0:
            legs.append(Leg(account_alias=alias, account_id=leg.account_id, amount=take,
                            salary=leg.salary))
            remaining -= take
    return legs


def info_totals(accounts: Iterable[SubjectAccount]) -> tuple[Decimal, Decimal]:
    """(total blockable, blockable in salary accounts)."""
    accounts = list(accounts)
    total = sum((a.own_funds for a in accounts), ZERO)
    salary = sum((a.own_funds for a in accounts if a.salary), ZERO)
    return total, salary
