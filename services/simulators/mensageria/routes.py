"""The SISBAJUD execution API: fetch an order, receive execution results."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from services.simulators.mensageria.faults import Fault
from services.simulators.mensageria.schemas import ExecutionResult
from services.simulators.mensageria.state import MensageriaState, now_iso

PREFIX = "/v1/sisbajud/execution/orders"
router = APIRouter(prefix=PREFIX)


class Refusal(Exception):
    """A non-2xx answer: `{"code": …, "message": …}` with `status`."""

    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.headers = headers or {}


async def refusal_handler(request: Request, exc: Exception) -> JSONResponse:
    """Render a `Refusal`."""
    assert isinstance(exc, Refusal)
    return JSONResponse(
        {"code": exc.code, "message": exc.message}, status_code=exc.status, headers=exc.headers
    )


async def sim(request: Request) -> MensageriaState:
    """The simulator state attached to the app."""
    return request.app.state.sim


Sim = Annotated[MensageriaState, Depends(sim)]


async def require_token(request: Request) -> None:
    """M2M `Authorization: Bearer <token>` this simulator issued, unexpired; 401 otherwise."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    bearer = {"WWW-Authenticate": 'Bearer error="invalid_token"'}
    if scheme.lower() != "bearer" or not token.strip():
        raise Refusal(401, "UNAUTHORIZED", "missing bearer token", bearer)
    refused = request.app.state.oauth.check(token.strip())
    if refused is not None:
        raise Refusal(401, "UNAUTHORIZED", f"{refused} bearer token", bearer)


async def apply_fault(fault: Fault | None) -> None:
    """Answer as the fault says; `accept_then_fail` is left to the route."""
    if fault is None or fault.kind == "accept_then_fail":
        return
    if fault.kind in ("timeout", "delay"):
        await asyncio.sleep(fault.delay_s)
        if fault.kind == "delay":
            return  # slow, then served as usual
        raise Refusal(504, "GATEWAY_TIMEOUT", "upstream request timeout")
    headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else None
    status = fault.status or 503
    raise Refusal(status, "INJECTED_FAULT", f"simulated {status}", headers)


@router.get("/{order_id}", name="orders.get", dependencies=[Depends(require_token)])
async def get_order(order_id: str, state: Sim) -> dict[str, Any]:
    await apply_fault(state.faults.take("orders.get"))
    with state.lock:
        withdrawn = state.withdrawn.get(order_id)
        order = state.orders.get(order_id)
    if withdrawn is not None:
        raise Refusal(withdrawn, "ORDER_WITHDRAWN", f"order {order_id} was withdrawn")
    if order is None:
        raise Refusal(404, "ORDER_NOT_FOUND", f"order {order_id} not found")
    return order


@router.post(
    "/{order_id}/execution-results", name="results.post", dependencies=[Depends(require_token)]
)
async def post_result(order_id: str, request: Request, state: Sim) -> JSONResponse:
    fault = state.faults.take("results.post")
    key = request.headers.get("x-idempotency")
    raw = await request.body()
    try:
        await apply_fault(fault)
    except Refusal as exc:
        state.log_refused(key, order_id, raw.decode(errors="replace"), exc.status)
        raise
    if not key:
        state.log_refused(None, order_id, raw.decode(errors="replace"), 400)
        raise Refusal(400, "IDEMPOTENCY_KEY_REQUIRED", "the X-Idempotency header is required")
    body = _validated(raw, state, key, order_id)
    new = state.record(key, order_id, body, "accepted")
    if fault is not None and fault.kind == "accept_then_fail":
        raise Refusal(fault.status or 500, "INJECTED_FAULT", "result stored, answer lost")
    answer = {"orderId": order_id, "idempotencyKey": key, "receivedAt": now_iso()}
    return JSONResponse(
        answer, status_code=201, headers={"X-Idempotency-Replayed": "false" if new else "true"}
    )


def _validated(raw: bytes, state: MensageriaState, key: str, order_id: str) -> dict[str, Any]:
    try:
        payload = json.loads(raw or b"null")
        if not isinstance(payload, dict):
            raise ValueError("the body must be a JSON object")
        ExecutionResult.model_validate(payload)
    except (ValueError, ValidationError) as exc:
        state.log_refused(key, order_id, raw.decode(errors="replace"), 422)
        raise Refusal(422, "INVALID_RESULT", str(exc)) from exc
    return payload
