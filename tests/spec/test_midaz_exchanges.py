"""Every exchange between the executor and the Midaz simulator during a scenario, validated
against Midaz's own OpenAPI document (vendored under tests/spec/midaz with its commit)."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from activities.sisbajud.contracts.orders import block_account_alias
from activities.sisbajud.models import SisbajudHumanDecision
from activities.sisbajud.operator import SisbajudOperations
from activities.sisbajud.operator.payloads import ResolutionIn
from services.simulators.midaz.testkit import send
from shared.temporal import TemporalHandle
from tests.spec.midaz_overrides import OVERRIDES
from tests.support.openapi_check import OpenApiDocument, Recorder
from tests.support.sisbajud import (
    MENSAGERIA,
    MIDAZ,
    World,
    new_order_id,
    sisbajud_settings,
    stored,
)

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
DOCUMENT = Path(__file__).parent / "midaz" / "openapi.huma.yaml"
DEFAULT_MARGIN_S = 3600


@pytest.fixture(scope="module")
def document() -> OpenApiDocument:
    """Midaz's document; its paths are served under `/v1`."""
    return OpenApiDocument(DOCUMENT, prefix="/v1", overrides=OVERRIDES)


async def _recording_world(settings, task_queue) -> tuple[World, Recorder]:
    world = await World(sisbajud_settings(settings, task_queue, heartbeat_every_seconds=0.4,
                                          human_decision_after_beats=20)).start()
    recorder = Recorder(httpx.ASGITransport(world.midaz_app))
    await world.http.aclose()
    world.http = httpx.AsyncClient(timeout=5.0, mounts={
        MIDAZ: recorder, MENSAGERIA: httpx.ASGITransport(world.mensageria_app)})
    return world, recorder


async def _scenario(world: World, client) -> None:
    """Full and partial block, release, information request, refused write, uncertain write
    proven by a later read, one held for people who resolve it with its transaction, a
    deferred write sent again, orphan, ticks."""
    await world.account("@spec-1", "70")
    await world.account("@spec-2", "30")
    await world.account("@spec-outsider", "100", document="55555555555")
    full, partial, release, info, refused, uncertain, held, deferred = (
        new_order_id() for _ in range(8))
    await world.order(full, amount="60")
    await world.order(partial, amount="500")
    await world.order(release, "DESBLOQUEIO", amount="20", parentOrderId=full)
    await world.order(info, "REQUISICAO_INFORMACAO", amount="0")
    await world.order(refused, amount="1")
    await world.order(uncertain, amount="2")
    # Its deadline minus the default margin (1 h) comes in a second: a person at once.
    soon = datetime.now(UTC) + timedelta(seconds=DEFAULT_MARGIN_S + 1)
    await world.order(held, amount="3", deadline=soon.isoformat())
    await world.order(deferred, amount="4")
    async with world.worker(client):
        for order_id in (full, partial, release, info):
            await world.execute(client, order_id)
        await world.midaz.post("/_sim/faults", json={
            "route": "transactions.create.block", "kind": "reject", "code": "0024",
            "status": 422})
        await world.start_order(client, refused)
        await world.until_state(refused, "PARKED")
        # Balances move, Midaz answers 500 0095, the transaction shows in reads 1.5 s later.
        await world.midaz.post("/_sim/faults", json={
            "route": "transactions.create.block", "kind": "write_without_proof",
            "recovery_s": 1.5})
        handle = await world.start_order(client, uncertain)
        await world.until_state(uncertain, "INDETERMINATE")
        await handle.result()
        await _held_then_resolved(world, client, held)
        # Midaz refuses the write's accounting route (422 0113): deferred, sent again.
        await world.midaz.post("/_sim/faults", json={
            "route": "transactions.create.block", "kind": "reject", "code": "0113",
            "status": 422})
        await world.execute(client, deferred)
        (await world.midaz.post(f"{world.ledger.base}/transactions/json", json=send(
            {"@spec-outsider": "5"}, {block_account_alias(full): "5"}))).raise_for_status()
        # The token expires: Midaz's auth layer answers 401, the executor renews once.
        await world.midaz.post("/_sim/oauth/expire")
        await world.tick(client)


async def _held_then_resolved(world: World, client, order_id: str) -> None:
    """A write without proof held for people, who resolve it with the transaction once Midaz
    shows it (`getTransaction`: what it moved)."""
    await world.midaz.post("/_sim/faults", json={
        "route": "transactions.create.block", "kind": "write_without_proof",
        "recovery_s": 2})
    handle = await world.hold(client, order_id, "HUMAN_DECISION")
    (tx,) = [t for t in await world.transactions()
             if t["metadata"].get("code") == f"{order_id}:1"]
    (decision,) = await stored(world, SisbajudHumanDecision, order_id=order_id)
    await asyncio.sleep(2.2)  # until Midaz shows the transaction

    face = SisbajudOperations(world.settings, world.sessions, TemporalHandle.of(client),
                              http=world.http)
    body = ResolutionIn(reason="the ledger shows it", effect="FULL",
                        reason_code="BLOCKED_TOTAL", executed_amount=Decimal(3),
                        transaction_id=tx["id"])
    for actor in ("operator:ana", "operator:rui"):
        await face.decisions.resolve(decision.id, body, actor)
    await handle.result()


async def test_every_exchange_with_midaz_conforms_to_its_document(settings, task_queue,
                                                                   temporal_env, document):
    world, recorder = await _recording_world(settings, task_queue)
    try:
        await _scenario(world, temporal_env.client)
    finally:
        await world.close()
    exchanges = [e for e in recorder.exchanges if not e.path.startswith("/v1/login/")
                 and not e.path.startswith("/oauth/")]
    operations = Counter(document.operation(e.method, e.path)[0]
                         for e in exchanges if document.operation(e.method, e.path))
    mismatches = [problem for e in exchanges for problem in document.check(e)]
    assert any(e.status == 401 for e in exchanges)  # the auth layer's answer was checked too
    print(f"{len(exchanges)} exchanges, {len(mismatches)} mismatches; operations: "
          f"{dict(operations)}")
    for problem in mismatches:
        print(problem)
    # Every operation the seed grants the executor was exercised.
    assert {"createTransactionBlock", "createTransactionUnblock", "createAccount",
            "listAccounts", "getBalancesByAlias", "listInstruments",
            "getAllOperationsByAccount", "getAllTransactions", "getTransaction"
            } <= set(operations)
    # The deferred write: refused once with the route code, then sent again and applied.
    assert any(e.status == 422 and b"0113" in e.response_body for e in exchanges)
    assert mismatches == []
