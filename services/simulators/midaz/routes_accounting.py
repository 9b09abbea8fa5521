"""Accounting routes: operation routes and transaction routes, created and read by id.

Shapes from Midaz's `OperationRoute` / `TransactionRoute` schemas (components/ledger/api/
openapi.huma.yaml); a missing id is `404` with Midaz's `0101` (operation route) or `0105`
(transaction route).
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request

from services.simulators.midaz.deps import LedgerDep, RouteFault, Sim, check_uuid
from services.simulators.midaz.errors import MidazError
from services.simulators.midaz.model import iso, uuid7

router = APIRouter(prefix="/v1/organizations/{organization_id}/ledgers/{ledger_id}")
OPERATION_TYPES = ("source", "destination", "bidirectional")


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = json.loads(await request.body() or b"{}")
    except ValueError as exc:
        raise MidazError("0094", "the body is not JSON", status=400) from exc
    if not isinstance(body, dict):
        raise MidazError("0094", "the body is not a JSON object", status=400)
    return body


def _route(state: Any, ledger: Any, kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    now = iso(state.clock())
    route = {"id": uuid7(), "organizationId": ledger.organization_id, "ledgerId": ledger.id,
             "title": str(fields.get("title") or ""),
             "description": str(fields.get("description") or ""),
             "createdAt": now, "updatedAt": now, "deletedAt": None, "_kind": kind,
             **{k: v for k, v in fields.items() if k not in ("title", "description")}}
    state.accounting_routes[route["id"]] = route
    return route


def _shown(route: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in route.items() if not k.startswith("_")}


def _find(state: Any, ledger: Any, route_id: str, kind: str, code: str) -> dict[str, Any]:
    route = state.accounting_routes.get(route_id)
    if route is None or route["_kind"] != kind or route["ledgerId"] != ledger.id:
        raise MidazError(code, entity_type="OperationRoute" if kind == "operation"
                         else "TransactionRoute")
    return route


@router.post("/operation-routes", name="operation_routes.create", status_code=201)
async def create_operation_route(request: Request, ledger: LedgerDep, state: Sim,
                                 _f: RouteFault) -> dict:
    body = await _body(request)
    if body.get("operationType") not in OPERATION_TYPES:
        raise MidazError("0094", "operationType is source, destination or bidirectional",
                         status=400)
    with state.lock:
        return _shown(_route(state, ledger, "operation",
                             {k: body[k] for k in ("title", "description", "operationType",
                                                   "code", "metadata") if k in body}))


@router.get("/operation-routes/{route_id}", name="operation_routes.get")
async def get_operation_route(route_id: str, ledger: LedgerDep, state: Sim,
                              _f: RouteFault) -> dict:
    check_uuid(operation_route_id=route_id)
    with state.lock:
        return _shown(_find(state, ledger, route_id, "operation", "0101"))


@router.post("/transaction-routes", name="transaction_routes.create", status_code=201)
async def create_transaction_route(request: Request, ledger: LedgerDep, state: Sim,
                                   _f: RouteFault) -> dict:
    body = await _body(request)
    with state.lock:
        operations = [_shown(_find(state, ledger, str(i), "operation", "0101"))
                      for i in body.get("operationRoutes") or []]
        return _shown(_route(state, ledger, "transaction", {
            **{k: body[k] for k in ("title", "description", "metadata") if k in body},
            "operationRoutes": operations}))


@router.get("/transaction-routes/{route_id}", name="transaction_routes.get")
async def get_transaction_route(route_id: str, ledger: LedgerDep, state: Sim,
                                _f: RouteFault) -> dict:
    check_uuid(transaction_route_id=route_id)
    with state.lock:
        return _shown(_find(state, ledger, route_id, "transaction", "0105"))
