"""Rows of the SISBAJUD store the console tests look at: a decision, alarms, an orphan
operation, parked notices/results/orders, an order with its results, writes and decision."""

from __future__ import annotations

from datetime import timedelta

from activities.sisbajud.models import (
    SisbajudAlarm,
    SisbajudHumanDecision,
    SisbajudNotice,
    SisbajudOrder,
    SisbajudOrphan,
    SisbajudOutbox,
    SisbajudWrite,
)
from shared.db.models import utcnow

ORDER = "ORD-CONSOLE-1"
PARKED_ORDER = "ORD-CONSOLE-PARKED"


async def seed_console(sessions) -> dict[str, int | str]:
    """One of each thing the console shows; their ids by name."""
    now = utcnow()
    async with sessions() as session:
        decision = SisbajudHumanDecision(order_id=ORDER, revision=1,
                                         reason="ledger.write-indeterminate")
        alarm = SisbajudAlarm(code="notice.unusable", order_id=ORDER,
                              message="Notice 7 parked: the order was unreadable")
        notice = SisbajudNotice(webhook_id="msg-parked-1", order_id=ORDER, revision=1,
                                state="PARKED", reason="order.unreadable")
        parked_result = SisbajudOutbox(
            idempotency_key=f"{PARKED_ORDER}:1:final", order_id=PARKED_ORDER, revision=1,
            payload={"executionState": "RESOLVED", "effect": "NONE"}, state="PARKED",
            attempts=9, last_status=500, last_error="Mensageria answered 500")
        session.add_all([
            decision, alarm, notice, parked_result,
            SisbajudOrder(order_id=ORDER, revision=1, operation="BLOQUEIO",
                          state="HUMAN_DECISION",
                          execution_state="AWAITING_RECONCILIATION", institution_id="SIMBANK"),
            SisbajudOrder(order_id=PARKED_ORDER, revision=1, operation="BLOQUEIO",
                          state="PARKED", detail="the notice named no institution"),
            SisbajudOrphan(operation_id="op-foreign-1", transaction_id="tx-foreign-1",
                           institution_id="SIMBANK", block_alias="@block-simbank",
                           account_id="acc-1", amount="10.00"),
            SisbajudOutbox(idempotency_key=f"{ORDER}:1:ACCEPTED", order_id=ORDER, revision=1,
                           payload={"executionState": "ACCEPTED", "effect": "INDETERMINATE"},
                           state="SENT", sent_at=now, created_at=now - timedelta(minutes=3)),
            SisbajudOutbox(idempotency_key=f"{ORDER}:1:AWAITING_PERSON", order_id=ORDER,
                           revision=1, payload={"executionState": "AWAITING_RECONCILIATION",
                                                "effect": "INDETERMINATE"},
                           state="PENDING", created_at=now - timedelta(minutes=1)),
            SisbajudWrite(idempotency_key=f"{ORDER}:1:block", order_id=ORDER, revision=1,
                          kind="block", institution_id="SIMBANK", block_alias="@block-simbank",
                          total="100.00", state="INDETERMINATE", transaction_id="tx-write-1",
                          created_at=now - timedelta(minutes=2)),
        ])
        await session.commit()
        ids = {"decision": decision.id, "alarm": alarm.id, "notice": notice.id,
               "result": parked_result.id}
    return {k: v for k, v in ids.items() if v is not None}
