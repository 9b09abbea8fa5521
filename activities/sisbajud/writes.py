"""Ledger writes: the order's block account, then one block/unblock with a stable key."""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import update
from temporalio import activity

from activities.sisbajud.clients import (
    LedgerActivities,
    UpstreamError,
    error_code,
)
from activities.sisbajud.contracts.ledger import (
    BlockAccountResult,
    EnsureBlockAccountInput,
    WriteInput,
    WriteKind,
    WriteOutcome,
    WriteOutcomeKind,
)
from activities.sisbajud.contracts.names import ENSURE_BLOCK_ACCOUNT_ACTIVITY, WRITE_LEDGER_ACTIVITY
from activities.sisbajud.contracts.orders import BLOCK_ACCOUNT_TYPE
from activities.sisbajud.errors import SisbajudErrorCode, fail
from activities.sisbajud.models import SisbajudWrite
from activities.sisbajud.plans import upstream_errors
from activities.sisbajud.routing import ActionRoutes, Resolution, WriteRoutes, resolve
from activities.sisbajud.store import insert_ignore
from activities.sisbajud.systemplane import SystemplaneUnavailable, current_documents
from activities.sisbajud.wire import money
from shared.db.models import utcnow
from shared.heartbeat import heartbeating, heartbeats
from shared.logs import props

# Balances moved between plan and write (no effect, key released): plan again, same key.
REPLAN_CODES = frozenset({"0018", "0086", "0174"})
# Midaz refused the write's accounting routes before balances moved (the key was released):
# the seed defers these, to be sent again with the same key once the config is fixed.
DEFER_CODES_422 = frozenset({"0113", "0114", "0116", "0117", "0118", "0119", "0152", "0157"})
DEFER_CODES_404 = frozenset({"0105"})
# 503 `0178` (ErrTransactionReservationUnavailable): the ledger's usage-limit reservation was
# unreachable with `failPosture: closed`, and Midaz rejects before any balance moves and
# releases the key (LerianStudio/midaz `transaction_create.go`, `pkg/constant/errors.go`).
# Nothing moved: deferred like a refused route, sent again later with the same key.
NOTHING_MOVED_503 = frozenset({"0178"})
HEARTBEAT_EVERY_SECONDS = 1.0
log = logging.getLogger("esteira.sisbajud")


class WriteActivities(LedgerActivities):
    """The two activities that change a ledger; dependencies come in through `__init__`."""

    @activity.defn(name=ENSURE_BLOCK_ACCOUNT_ACTIVITY)
    @heartbeats
    async def ensure_block_account(self, request: EnsureBlockAccountInput
                                   ) -> BlockAccountResult:
        """Create; `409 0020` (the alias exists: a retry, or made meanwhile) means look it up
        by its exact alias. A new order's account never exists, so this is one call."""
        with upstream_errors():
            midaz = self._midaz(request.institution_id)
            response = await midaz.create_account({
                "assetCode": midaz.institution.asset_code, "type": BLOCK_ACCOUNT_TYPE,
                "alias": request.alias, "name": f"SISBAJUD block {request.alias}"})
            if response.status_code == 201:
                return BlockAccountResult(account_id=response.json()["id"], created=True)
            code = error_code(response)
            if response.status_code == 409 and code == "0020":
                found = await midaz.account_by_alias(request.alias)
                if found is not None:
                    return BlockAccountResult(account_id=found["id"], created=False)
            raise UpstreamError(response.status_code, code, response.text[:200])

    @activity.defn(name=WRITE_LEDGER_ACTIVITY)
    async def write_ledger(self, request: WriteInput) -> WriteOutcome:
        """Register the write, send it with `X-Idempotency`/`X-TTL`, classify the answer."""
        await self._register(request)
        midaz = self._midaz(request.order.institution_id)
        documents: dict[str, Any] = {}
        inst = midaz.institution
        routes = None
        if self._settings.sisbajud.systemplane_enabled:  # routes off: nothing to read
            try:
                documents = await current_documents(self._settings, self._sessions)
            except SystemplaneUnavailable as exc:
                routes = WriteRoutes(Resolution.UNRESOLVABLE,
                                     code="routing.systemplane-unavailable", problem=str(exc))
        routes = routes or resolve(self._settings, documents, inst.organization_id,
                                   inst.ledger_id, request.kind.value)
        if routes.resolution == Resolution.UNRESOLVABLE:
            # Nothing leaves: the order waits for the configuration, same key later.
            await self._update(request, None, routes.code, WriteOutcomeKind.DEFERRED)
            return WriteOutcome(kind=WriteOutcomeKind.DEFERRED, code=routes.code,
                                detail=routes.problem)
        body = _transaction_body(request, inst.asset_code, routes.routes)
        try:
            # Beat while the write is in flight, so a dead worker is noticed in seconds.
            async with heartbeating(HEARTBEAT_EVERY_SECONDS):
                response = await midaz.post_transaction(request.kind.value, body,
                                                        request.idempotency_key)
        except httpx.HTTPError as exc:
            # The same key makes a resend safe: Midaz replays or refuses, never applies twice.
            await self._update(request, None, None, WriteOutcomeKind.INDETERMINATE)
            raise fail(SisbajudErrorCode.MIDAZ_UNAVAILABLE,
                       f"ledger write failed: {type(exc).__name__}: {exc}") from exc
        outcome = _classify(response)
        await self._update(request, response.status_code, outcome.code, outcome.kind, outcome)
        log.info("Ledger %s %s: %s %s", request.kind.value, request.idempotency_key,
                 response.status_code, outcome.kind.value,
                 extra=props(OrderId=request.order.order_id, Key=request.idempotency_key,
                             Status=response.status_code, Replayed=outcome.replayed))
        if outcome.kind == WriteOutcomeKind.REJECTED and UpstreamError(
                response.status_code).retryable and response.status_code < 500:
            raise fail(SisbajudErrorCode.MIDAZ_UNAVAILABLE,
                       f"ledger write answered {response.status_code}")
        return outcome

    async def _register(self, request: WriteInput) -> None:
        async with self._sessions() as session:
            await insert_ignore(session, SisbajudWrite, {
                "idempotency_key": request.idempotency_key, "order_id": request.order.order_id,
                "revision": request.order.revision, "kind": request.kind.value,
                "institution_id": request.order.institution_id,
                "block_alias": request.block_alias, "parent_order_id": request.parent_order_id,
                "total": str(request.total),
                "legs": [leg.model_dump(mode="json") for leg in request.legs],
                "state": "PENDING", "replayed": False, "attempts": 0,
                "created_at": utcnow(), "updated_at": utcnow()}, ["idempotency_key"])
            await session.commit()

    async def _update(self, request: WriteInput, status: int | None, code: str | None,
                      kind: WriteOutcomeKind, outcome: WriteOutcome | None = None) -> None:
        values: dict[str, Any] = {"state": kind.value, "last_status": status, "last_code": code,
                                  "attempts": SisbajudWrite.attempts + 1, "updated_at": utcnow()}
        if outcome is not None and kind == WriteOutcomeKind.APPLIED:
            values.update(transaction_id=outcome.transaction_id, replayed=outcome.replayed,
                          applied_amount=str(outcome.amount),
                          legs=[leg.model_dump(mode="json") for leg in request.legs])
        async with self._sessions() as session:
            await session.exec(update(SisbajudWrite).where(  # type: ignore[call-overload]
                SisbajudWrite.idempotency_key == request.idempotency_key,
                SisbajudWrite.state != "APPLIED").values(**values))
            await session.commit()


def _transaction_body(request: WriteInput, asset: str,
                      routes: ActionRoutes | None = None) -> dict[str, Any]:
    order = request.order
    legs = [{"accountAlias": leg.account_alias,
             "amount": {"asset": asset, "value": money(leg.amount)}} for leg in request.legs]
    block = [{"accountAlias": request.block_alias,
              "amount": {"asset": asset, "value": money(request.total)}}]
    sources, destinations = (legs, block) if request.kind == WriteKind.BLOCK else (block, legs)
    body: dict[str, Any] = {
        "description": f"SISBAJUD {order.operation.value} {order.order_id} r{order.revision}",
        "metadata": {"code": request.idempotency_key, "orderId": order.order_id,
                     "orderRevision": order.revision, "operation": order.operation.value},
        "send": {"asset": asset, "value": money(request.total),
                 "source": {"from": sources}, "distribute": {"to": destinations}},
    }
    if routes is not None:
        body["routeId"] = routes.transaction_route_id
        for leg in sources:
            leg["routeId"] = routes.source_route_id
        for leg in destinations:
            leg["routeId"] = routes.destination_route_id
    return body


def _classify(response: httpx.Response) -> WriteOutcome:
    status, code = response.status_code, error_code(response)
    if status == 201:
        tx = response.json()
        operations = tx.get("operations") or []
        return WriteOutcome(
            kind=WriteOutcomeKind.APPLIED, http_status=status, transaction_id=tx.get("id"),
            amount=Decimal(str(tx.get("amount") or 0)),
            replayed=response.headers.get("X-Idempotency-Replayed", "").lower() == "true",
            overdraft_touched=any(op.get("balanceKey") == "overdraft"
                                  or op.get("type") == "OVERDRAFT" for op in operations))
    if ((status == 422 and code in DEFER_CODES_422) or (status == 404 and code in DEFER_CODES_404)
            or (status == 503 and code in NOTHING_MOVED_503)):
        return WriteOutcome(kind=WriteOutcomeKind.DEFERRED, http_status=status, code=code,
                            detail=response.text[:200])
    if status >= 500 or (status == 409 and code == "0084"):
        # No proof either way: the order's workflow reads the ledger again before each beat.
        return WriteOutcome(kind=WriteOutcomeKind.INDETERMINATE, http_status=status, code=code,
                            detail=response.text[:200])
    return WriteOutcome(kind=WriteOutcomeKind.REJECTED, http_status=status, code=code,
                        retry_with_new_plan=status == 422 and code in REPLAN_CODES,
                        detail=response.text[:200])
