"""The money rules: own funds only, overdraft as 0, salary gate, restriction, allocation."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from activities.sisbajud.contracts.ledger import Leg
from activities.sisbajud.contracts.orders import block_account_alias
from activities.sisbajud.rules import (
    SubjectAccount,
    block_legs,
    info_totals,
    is_active,
    own_funds,
    release_amount,
    release_legs,
    restrict,
)


def _acc(alias: str, funds: str, salary: bool = False, branch: str = "0001") -> SubjectAccount:
    return SubjectAccount(f"id-{alias}", alias, D(funds), salary, branch, alias)


@pytest.mark.parametrize(("balance", "expected"), [
    ({"available": "150.5", "overdraftUsed": "0"}, "150.5"),
    ({"available": "0", "overdraftUsed": "40"}, "0"),
    ({"available": "10", "overdraftUsed": "5"}, "0"),  # any overdraft use: nothing of its own
    ({"available": "-3"}, "0"),
    (None, "0"),
    # Whole cents, rounded down: a leg leaves as "10.00", never more than is there.
    ({"available": "10.009"}, "10.00"),
    ({"available": "0.004"}, "0"),
])
def test_own_funds_count_an_overdrawn_account_as_zero(balance, expected):
    assert own_funds(balance) == D(expected)


def test_legs_never_exceed_available_and_stop_at_the_open_amount():
    legs = block_legs([_acc("@a", "30"), _acc("@b", "50"), _acc("@c", "90")], D("100"), False)
    assert [(leg.account_alias, leg.amount) for leg in legs] == [("@a", 30), ("@b", 50),
                                                                  ("@c", 20)]


def test_salary_accounts_are_skipped_unless_the_order_allows_them():
    accounts = [_acc("@salary", "500", salary=True), _acc("@cc", "40")]
    assert [leg.account_alias for leg in block_legs(accounts, D("100"), False)] == ["@cc"]
    allowed = block_legs(accounts, D("100"), True)
    # Non-salary funds are taken first; salary only for what remains open.
    assert [(leg.account_alias, leg.amount, leg.salary) for leg in allowed] == [
        ("@cc", 40, False), ("@salary", 60, True)]


def test_zero_funds_make_no_legs():
    assert block_legs([_acc("@a", "0")], D("10"), True) == []


def test_agency_and_account_restriction():
    accounts = [_acc("@a", "1", branch="0001"), _acc("@b", "1", branch="0002")]
    assert [a.alias for a in restrict(accounts, "0002", None)] == ["@b"]
    assert [a.alias for a in restrict(accounts, None, "@a")] == ["@a"]
    assert restrict(accounts, "0001", "@b") == []
    assert restrict(accounts, None, None) == accounts


def test_is_active_needs_active_unblocked_same_asset_and_not_closed():
    account = {"status": {"code": "ACTIVE"}, "blocked": False, "assetCode": "BRL"}
    assert is_active(account, {}, "BRL")
    assert not is_active({**account, "status": {"code": "INACTIVE"}}, {}, "BRL")
    assert not is_active({**account, "blocked": True}, {}, "BRL")
    assert not is_active({**account, "assetCode": "USD"}, {}, "BRL")
    assert not is_active(account, {"bankingDetails": {"closingDate": "2026-01-01"}}, "BRL")
    assert not is_active(None, {}, "BRL")


@pytest.mark.parametrize(("requested", "remaining", "balance", "expected"), [
    ("100", "80", "90", "80"), ("50", "80", "90", "50"), ("100", "80", "30", "30"),
    ("100", "0", "30", "0"), ("100", "-5", "30", "0"),
])
def test_release_is_the_least_of_three(requested, remaining, balance, expected):
    assert release_amount(D(requested), D(remaining), D(balance)) == D(expected)


def test_release_goes_back_to_each_source_in_leg_order_minus_what_was_returned():
    parent = [Leg(account_alias="@a", amount=D(30)), Leg(account_alias="@b", amount=D(50)),
              Leg(account_alias="@a", amount=D(10))]
    legs = release_legs(parent, {"@a": D(15)}, D(40))
    assert [(leg.account_alias, leg.amount) for leg in legs] == [("@a", 25), ("@b", 15)]


def test_info_totals_split_salary():
    total, salary = info_totals([_acc("@a", "10"), _acc("@s", "5.5", salary=True)])
    assert (total, salary) == (D("15.5"), D("5.5"))


def test_block_alias_is_the_32_lowercase_hex_of_the_order_id():
    alias = block_account_alias("0190A1B2-C3D4-7E5F-8071-8293A4B5C6D7")
    assert alias == "@block_sisbajud_0190a1b2c3d47e5f80718293a4b5c6d7"
    with pytest.raises(ValueError):
        block_account_alias("not-a-uuid")
