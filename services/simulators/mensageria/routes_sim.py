"""`/_sim/*`: seed and withdraw orders, read results, faults, reset."""

from __future__ import annotations

from itertools import islice
from typing import Any

from fastapi import APIRouter, HTTPException

from services.simulators.mensageria.faults import Fault
from services.simulators.mensageria.routes import Sim
from services.simulators.mensageria.schemas import SeedOrder, WithdrawIn

router = APIRouter(prefix="/_sim")


@router.post("/reset")
def reset(state: Sim) -> dict:
    state.reset()
    return {"reset": True}


@router.post("/orders", status_code=201)
def seed_orders(body: list[SeedOrder] | SeedOrder, state: Sim) -> list[dict[str, Any]]:
    """Store orders (a new revision replaces the old one and clears a withdrawal)."""
    orders = body if isinstance(body, list) else [body]
    stored = []
    with state.lock:
        for order in orders:
            data = order.model_dump(mode="json")
            state.orders[order.orderId] = data
            state.withdrawn.pop(order.orderId, None)
            stored.append(data)
    return stored


@router.get("/orders")
def list_orders(state: Sim) -> dict[str, Any]:
    with state.lock:
        return {"orders": list(state.orders.values()), "withdrawn": dict(state.withdrawn)}


@router.post("/orders/{order_id}/withdraw")
def withdraw(order_id: str, body: WithdrawIn, state: Sim) -> dict[str, Any]:
    """From now on the order answers 404 or 410."""
    with state.lock:
        state.withdrawn[order_id] = body.status
    return {"orderId": order_id, "status": body.status}


@router.get("/results")
def results(
    state: Sim, orderId: str | None = None, since: int = 0, attempts: bool = True
) -> dict[str, Any]:
    """Deduplicated results (first body per key) after seq `since`, every attempt, the keys seen.

    A poller passes `since` (the last `seq` it saw) and `attempts=false`: it gets only what is
    new, instead of every result and attempt since the start at each poll.
    """
    with state.lock:
        newer = islice(state.results.values(), since, None)  # seq n sits at index n - 1
        kept = [r for r in newer if orderId in (None, r["orderId"])]
        tried = [a for a in state.attempts if orderId in (None, a["orderId"])] if attempts else []
    body: dict[str, Any] = {"results": kept}
    if attempts:
        body["attempts"] = tried
        body["keys"] = sorted({a["idempotencyKey"] for a in tried if a["idempotencyKey"]})
    return body


@router.get("/faults")
def list_faults(state: Sim) -> list[dict]:
    return state.faults.describe()


@router.post("/faults", status_code=201)
def add_fault(fault: Fault, state: Sim) -> list[dict]:
    state.faults.add(fault)
    return state.faults.describe()


@router.delete("/faults")
def clear_faults(state: Sim) -> dict:
    state.faults.clear()
    return {"cleared": True}


@router.get("/orders/{order_id}")
def peek_order(order_id: str, state: Sim) -> dict[str, Any]:
    with state.lock:
        order = state.orders.get(order_id)
    if order is None:
        raise HTTPException(404, "unknown order")
    return order
