"""A Midaz read that failed for good: a refused one is an alarm and a person's decision, due
by the order's deadline minus the margin, and is never retried."""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from workflows.sisbajud.state import OrderRun

with workflow.unsafe.imports_passed_through():
    from activities.sisbajud.contracts.errors import SisbajudErrorCode
    from activities.sisbajud.contracts.orders import (
        AlarmCode,
        HumanReason,
        Order,
        OrderState,
        SettleInput,
    )

# Runs recorded before a refused read went to a person parked the order instead.
READ_REFUSED_PATCH = "sisbajud-read-refused-decides"


@dataclass(frozen=True)
class ReadFailure:
    """Why an activity that reads Midaz gave up; `refused`: Midaz answered 403, 404 or another
    final 4xx (the operation is not granted, or the route is wrong)."""

    detail: str
    refused: bool = False


def read_failure(exc: ActivityError) -> ReadFailure:
    """The failure an activity's error carries."""
    cause = exc.cause
    if isinstance(cause, ApplicationError):
        return ReadFailure(cause.message,
                           refused=cause.type == SisbajudErrorCode.MIDAZ_READ_REFUSED)
    return ReadFailure(str(cause))


def refused_detail(run: OrderRun, order: Order, failure: ReadFailure) -> str:
    """What the person reads: the refused read, and by when to decide."""
    due = run.decide_at(order)
    by = f" by {due.isoformat()}" if due is not None else ""
    return (f"{failure.detail}; grant the executor that read in Midaz, or answer the order "
            f"here{by}")


def read_failed(run: OrderRun, order: Order, failure: ReadFailure) -> SettleInput:
    """A refused read: alarm `ledger.read-failed` and a human decision `ledger.read-refused`;
    any other final failure parks the order with the alarm."""
    if failure.refused and workflow.patched(READ_REFUSED_PATCH):
        return SettleInput(order_id=order.order_id, revision=order.revision,
                           state=OrderState.HUMAN_DECISION, alarm=AlarmCode.LEDGER_READ_FAILED,
                           human_reason=HumanReason.READ_REFUSED,
                           detail=refused_detail(run, order, failure))
    return SettleInput(order_id=order.order_id, revision=order.revision,
                       state=OrderState.PARKED, alarm=AlarmCode.LEDGER_READ_FAILED,
                       detail=f"a read the order needs failed: {failure.detail}")
