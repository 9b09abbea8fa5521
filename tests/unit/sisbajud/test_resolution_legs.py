"""What a transaction moved, read from its operations as Midaz reports them."""

from __future__ import annotations

from decimal import Decimal

from activities.sisbajud.contracts.orders import Leg
from activities.sisbajud.resolution_legs import moved_legs

BLOCK = "@block_sisbajud_0190a1b2c3d4e5f60718293a4b5c6d7e"


def _op(alias: str, direction: str, value: str, **fields) -> dict:
    # A block's operations are typed BLOCK; the side is the direction.
    return {"accountAlias": alias, "accountId": f"id-{alias}", "direction": direction,
            "type": "BLOCK", "amount": {"value": value}, **fields}


def test_a_blocks_sources_are_its_debits_in_the_ledgers_order():
    tx = {"operations": [_op("@b", "debit", "30"), _op("@a", "debit", "5"),
                         _op("@a", "debit", "15", balanceKey="overdraft", type="OVERDRAFT"),
                         _op(BLOCK, "credit", "50")]}
    planned = [Leg(account_alias="@a", amount=Decimal(70)),
               Leg(account_alias="@b", amount=Decimal(30), salary=True)]
    legs, held = moved_legs(tx, "block", BLOCK, planned)
    assert [(leg.account_alias, leg.amount, leg.salary, leg.account_id) for leg in legs] == [
        ("@b", 30, True, "id-@b"), ("@a", 20, False, "id-@a")]
    assert held == 50


def test_a_releases_destinations_are_its_credits_and_an_unplanned_account_is_not_trusted():
    tx = {"operations": [_op(BLOCK, "debit", "12.50", type="UNBLOCK"),
                         _op("@c", "credit", "12.50", type="UNBLOCK")]}
    legs, held = moved_legs(tx, "unblock", BLOCK, [])
    assert [(leg.account_alias, leg.amount, leg.salary) for leg in legs] == [
        ("@c", Decimal("12.50"), True)]  # not in the plan: a person checks it
    assert held == Decimal("12.50")


def test_a_transaction_without_operations_moved_nothing_it_can_show():
    assert moved_legs({"operations": None}, "block", BLOCK, []) == ([], 0)
