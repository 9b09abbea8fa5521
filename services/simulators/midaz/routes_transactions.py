"""Transaction create routes (with idempotency and write faults) and ledger reads."""

from __future__ import annotations

import asyncio
import hashlib

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from services.simulators.midaz import posting, queries
from services.simulators.midaz.deps import LedgerDep, RouteFault, Sim, check_uuid
from services.simulators.midaz.errors import MidazError
from services.simulators.midaz.faults import Fault
from services.simulators.midaz.idempotency import parse_ttl
from services.simulators.midaz.model import Ledger, Transaction, uuid7
from services.simulators.midaz.schemas import CreateTransaction, decode
from services.simulators.midaz.state import MidazState

router = APIRouter(prefix="/v1/organizations/{organization_id}/ledgers/{ledger_id}")
KINDS = ("json", "block", "unblock", "inflow", "outflow")
REPLAYED = "X-Idempotency-Replayed"


def _create_route(kind: str):
    async def create(
        request: Request, ledger: LedgerDep, state: Sim, fault: RouteFault
    ) -> JSONResponse:
        return await create_transaction(kind, request, ledger, state, fault)

    create.__name__ = f"create_{kind}"
    return create


for _kind in KINDS:
    router.add_api_route(
        f"/transactions/{_kind}",
        _create_route(_kind),
        methods=["POST"],
        name=f"transactions.create.{_kind}",
        status_code=201,
    )


async def create_transaction(
    kind: str, request: Request, ledger: Ledger, state: MidazState, fault: Fault | None
) -> JSONResponse:
    """Midaz's create flow: decode, claim the key, validate, move balances, store the body."""
    raw = await request.body()
    body = decode(CreateTransaction, raw, "Transaction")
    with state.lock:
        now = state.clock()
        if body.transactionDate and body.transactionDate.timestamp() > now:
            raise MidazError("0121")
        if body.send.value <= 0:
            raise MidazError("0125")
        header_key = request.headers.get("x-idempotency")
        # Without a key Midaz hashes the body and keeps it for the default 300 s.
        key = header_key or hashlib.sha256(raw).hexdigest()
        ttl = parse_ttl(request.headers.get("x-ttl") if header_key else None)
        scoped = state.idempotency.scoped(ledger.organization_id, ledger.id, key)
        claim = state.idempotency.claim(scoped, ttl)
        if claim.outcome == "replay":
            return JSONResponse(claim.value, status_code=201, headers={REPLAYED: "true"})
        if claim.outcome == "conflict":
            err = MidazError("0084", key, entity_type="Transaction")
            err.headers[REPLAYED] = "false"
            raise err
        try:
            tx = _post(kind, body, ledger, state, fault, now)
        except MidazError:
            # Every failure before balances move releases the key: a retry re-executes.
            state.idempotency.release(scoped)
            raise
        if fault is not None and fault.kind == "write_without_proof":
            # Balances moved; the claim stays empty so retries get 409 0084 until the TTL.
            recovery = fault.recovery_s if fault.recovery_s is not None else state.config.lag_s
            _hide_until(tx, now + recovery)
            state.record(tx, readable_at=now + recovery)
            raise MidazError(fault.code or "0095", status=fault.status)
        state.record(tx, readable_at=now)
        answer = tx.to_json(status="CREATED")
        state.idempotency.fill(scoped, answer)
    if fault is not None and fault.kind == "timeout_after_write":
        await asyncio.sleep(fault.delay_s)
    return JSONResponse(answer, status_code=201, headers={REPLAYED: "false"})


def _post(
    kind: str,
    body: CreateTransaction,
    ledger: Ledger,
    state: MidazState,
    fault: Fault | None,
    now: float,
) -> Transaction:
    legs = posting.resolve_legs(kind, body)
    if fault is not None and fault.kind == "reject":
        raise MidazError(fault.code or "0117", status=fault.status)
    aliases = (leg.spec.accountAlias for leg in legs)
    posting.check_balances(legs, body.send.asset, state.balance_lookup(ledger, aliases))
    tx_id = uuid7()
    visible_at = now + state.config.lag_s
    operations = posting.apply(legs, kind, tx_id, now, visible_at)
    return Transaction(
        id=tx_id,
        organization_id=ledger.organization_id,
        ledger_id=ledger.id,
        kind=kind,
        amount=body.send.value,
        asset_code=body.send.asset,
        description=body.description,
        metadata=body.metadata,
        source=[leg.spec.accountAlias for leg in legs if leg.side == "source"],
        destination=[leg.spec.accountAlias for leg in legs if leg.side == "destination"],
        operations=operations,
        created_at=now,
        visible_at=visible_at,
        route_id=body.routeId,
        chart_of_accounts_group_name=body.chartOfAccountsGroupName,
    )


def _hide_until(tx: Transaction, when: float) -> None:
    tx.visible_at = max(tx.visible_at, when)
    for op in tx.operations:
        op.visible_at = tx.visible_at


@router.get("/transactions/{transaction_id}", name="transactions.get")
async def get_transaction(
    transaction_id: str, ledger: LedgerDep, state: Sim, _f: RouteFault
) -> dict:
    check_uuid(transaction_id=transaction_id)
    with state.lock:
        return state.transaction(ledger, transaction_id).to_json()


@router.get("/transactions", name="transactions.list")
async def list_transactions(
    request: Request, ledger: LedgerDep, state: Sim, _f: RouteFault
) -> dict:
    with state.lock:
        now = state.clock()
        query = queries.parse(request.query_params, now, state.config.window_months)
        found = [
            tx
            for tx in state.transactions.values()
            if tx.ledger_id == ledger.id
            and tx.visible_at <= now
            and query.start <= tx.created_at <= query.end
            and queries.metadata_matches(tx.metadata, query.metadata)
        ]
        return queries.cursor_page(found, query, lambda t: t.id, lambda t: t.to_json())


@router.get("/accounts/{account_id}/operations", name="operations.list")
async def list_operations(
    account_id: str, request: Request, ledger: LedgerDep, state: Sim, _f: RouteFault
) -> dict:
    check_uuid(account_id=account_id)
    params = request.query_params
    with state.lock:
        now = state.clock()
        account = state.account(ledger, account_id)
        query = queries.parse(params, now, state.config.window_months)
        wanted_type = (params.get("type") or "").upper()
        found = [
            op
            for op in state.operations_by_account.get(account.id, [])
            if op.visible_at <= now
            and query.start <= op.created_at <= query.end
            and (not wanted_type or op.type == wanted_type)
            and queries.metadata_matches(op.metadata, query.metadata)
        ]
        found.sort(key=lambda op: op.id)
        return queries.cursor_page(found, query, lambda o: o.id, lambda o: o.to_json())


@router.get("/accounts/{account_id}/operations/{operation_id}", name="operations.get")
async def get_operation(
    account_id: str, operation_id: str, ledger: LedgerDep, state: Sim, _f: RouteFault
) -> dict:
    check_uuid(account_id=account_id, operation_id=operation_id)
    with state.lock:
        now = state.clock()
        for tx in state.transactions.values():
            for op in tx.operations:
                if (
                    op.id == operation_id
                    and op.account.id == account_id
                    and op.visible_at <= now
                    and tx.ledger_id == ledger.id
                ):
                    return op.to_json()
    raise MidazError("0068", entity_type="Operation")
