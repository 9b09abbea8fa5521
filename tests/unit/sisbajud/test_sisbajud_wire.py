"""Mensageria bodies: what makes an order executable, how results are rendered."""

from __future__ import annotations

from decimal import Decimal

import pytest

from activities.sisbajud.contracts.orders import Effect, ExecutionState, Operation, ResultPayload
from activities.sisbajud.wire import InvalidOrder, money, order_from_wire, result_to_wire

ORDER = {"orderId": "0190a1b2-c3d4-7e5f-8071-8293a4b5c6d7", "revision": 2,
         "operation": "DESBLOQUEIO", "institutionId": "BANK1",
         "subject": {"document": "123"}, "amount": "150.00",
         "parentOrderId": "0190a1b2c3d47e5f80718293a4b5c6d8", "deadline": "2026-12-01T23:59:00Z"}


def test_an_order_maps_to_the_contract():
    order = order_from_wire(ORDER)
    assert order.operation is Operation.DESBLOQUEIO and order.amount == Decimal("150.00")
    assert order.parent_order_id == ORDER["parentOrderId"] and order.deadline.tzinfo


@pytest.mark.parametrize("change", [
    {"orderId": "not-a-uuid"}, {"operation": "PENHORA"}, {"amount": "-1"}, {"amount": "abc"},
    {"amount": "10.005"},
    {"subject": {}}, {"institutionId": None, "revision": "x"}, {"parentOrderId": "nope"},
])
def test_an_unexecutable_order_is_refused(change):
    payload = {**ORDER, **change}
    if change.get("institutionId", 0) is None:
        del payload["institutionId"]
    with pytest.raises(InvalidOrder):
        order_from_wire(payload)


def test_results_are_camel_case_with_decimal_strings():
    wire = result_to_wire(ResultPayload(
        order_id="o", order_revision=3, execution_state=ExecutionState.RESOLVED,
        effect=Effect.PARTIAL, requested_amount=Decimal("100"),
        executed_amount=Decimal("42.5"), blockable_total=Decimal("1E+3")))
    assert wire == {"orderId": "o", "orderRevision": 3, "executionState": "RESOLVED",
                    "effect": "PARTIAL", "requestedAmount": "100.00", "executedAmount": "42.50",
                    "blockableTotal": "1000.00"}


@pytest.mark.parametrize(("amount", "text"), [
    ("850", "850.00"), ("850.5", "850.50"), ("850.00", "850.00"), ("0", "0.00"),
    ("12.340", "12.34"), ("1E+3", "1000.00"), (Decimal("0.001"), "0.001"), (7, "7.00")])
def test_amounts_leave_with_two_places_and_are_never_rounded(amount, text):
    assert money(amount) == text


def test_a_deadline_without_offset_is_taken_as_utc():
    order = order_from_wire({**ORDER, "deadline": "2026-12-01T23:59:00"})
    assert order.deadline is not None and order.deadline.utcoffset().total_seconds() == 0
