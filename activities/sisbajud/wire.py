"""Mensageria bodies: the order it serves and the result it receives."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from decimal import Decimal, Inexact, InvalidOperation, localcontext
from typing import Any

from activities.sisbajud.contracts.orders import Operation, Order, ResultPayload

CENT = Decimal("0.01")


def money(amount: Decimal | int | str) -> str:
    """The one format amounts leave in, to Midaz and the Mensageria: `850` -> `"850.00"`.

    Two places; an amount finer than a cent keeps its digits rather than being rounded
    (money is never changed by formatting)."""
    value = Decimal(str(amount))
    with localcontext() as context:
        context.traps[Inexact] = True
        try:
            return f"{value.quantize(CENT):f}"
        except Inexact:
            return f"{value.normalize():f}"


class InvalidOrder(ValueError):
    """The Mensageria answered 200 with something that is not an executable order."""


def order_from_wire(payload: Any) -> Order:
    """Map `{"orderId", "revision", "operation", …}` to `Order`, refusing what can't run."""
    if not isinstance(payload, dict):
        raise InvalidOrder("the order is not a JSON object")
    try:
        order_id = str(payload["orderId"])
        uuid.UUID(order_id)  # the block account alias is the id's 32 hex digits
        operation = Operation(payload["operation"])
        parent = payload.get("parentOrderId") or None
        if parent is not None:
            uuid.UUID(str(parent))
        amount = Decimal(str(payload.get("amount") or 0))
        if not amount.is_finite() or amount < 0:
            raise InvalidOrder("amount must be a non-negative decimal")
        if amount != amount.quantize(CENT):
            raise InvalidOrder(f"amount {amount} is finer than a cent")
        deadline = payload.get("deadline")
        return Order(
            order_id=order_id, revision=int(payload["revision"]), operation=operation,
            institution_id=str(payload["institutionId"]),
            document=str((payload.get("subject") or {})["document"]), amount=amount,
            agency=payload.get("agency") or None, account=payload.get("account") or None,
            allow_salary_accounts=bool(payload.get("allowSalaryAccounts", False)),
            parent_order_id=str(parent) if parent else None,
            deadline=_aware(deadline) if deadline else None,
            protocol=payload.get("protocol"),
        )
    except InvalidOrder:
        raise
    except (KeyError, TypeError, ValueError, InvalidOperation) as exc:
        raise InvalidOrder(f"the order cannot be executed: {type(exc).__name__}: {exc}") from exc


def _aware(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)  # naive: taken as UTC


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def result_to_wire(result: ResultPayload) -> dict[str, Any]:
    """camelCase JSON, amounts as `money` strings, absent fields left out."""
    data = result.model_dump(mode="json", exclude_none=True)
    for name in data:
        value = getattr(result, name)
        if isinstance(value, Decimal):
            data[name] = money(value)
    return {_camel(key): value for key, value in data.items()}
