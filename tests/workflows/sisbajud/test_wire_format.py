"""On the wire: what the executor really sends to Midaz and the Mensageria, request by request."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from activities.sisbajud.contracts.orders import block_account_alias
from tests.support.sisbajud import MENSAGERIA, MIDAZ, new_order_id

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
# The one format amounts leave in: digits, a point, two places (`"850.00"`, never `"850"`).
MONEY = re.compile(r"^\d+\.\d{2}$")
RESULT_AMOUNTS = ("requestedAmount", "executedAmount", "blockableTotal",
                  "blockableSalaryTotal")


def _record(world) -> list[httpx.Request]:
    """Every request the executor's activities send, as they leave its HTTP client."""
    sent: list[httpx.Request] = []

    async def keep(request: httpx.Request) -> None:
        sent.append(request)

    world.http.event_hooks = {**world.http.event_hooks,
                              "request": [*world.http.event_hooks["request"], keep]}
    return sent


def _body(request: httpx.Request) -> dict[str, Any]:
    return json.loads(request.content) if request.content else {}


def _midaz_amounts(body: dict[str, Any]) -> list[Any]:
    send = body["send"]
    legs = [*send["source"]["from"], *send["distribute"]["to"]]
    return [send["value"], *(leg["amount"]["value"] for leg in legs)]


async def test_writes_accounts_and_amounts_on_the_wire(world, temporal_env):
    client = temporal_env.client
    sent = _record(world)
    await world.account("@w-1", "600")
    await world.account("@w-2", "250")
    # A balance finer than a cent: the executor takes whole cents only.
    await world.account("@w-3", "0.509", document="98765432100")
    full, partial, release, info = (new_order_id() for _ in range(4))
    await world.order(full, amount="850")
    await world.order(partial, amount="100", subject={"document": "98765432100"})
    await world.order(release, "DESBLOQUEIO", amount="850", parentOrderId=full)
    await world.order(info, "REQUISICAO_INFORMACAO", amount="0")
    async with world.worker(client):
        for order_id in (full, partial, release, info):
            await world.execute(client, order_id)
        await world.tick(client)
    writes = [r for r in sent if r.method == "POST" and r.url.path.endswith(
        ("/transactions/block", "/transactions/unblock"))]
    assert len(writes) == 3
    for request in writes:
        assert request.url.host == httpx.URL(MIDAZ).host
        assert request.headers["X-TTL"] == "604800"
        body = _body(request)
        assert request.headers["X-Idempotency"] == body["metadata"]["code"]
        assert all(isinstance(v, str) and MONEY.match(v) for v in _midaz_amounts(body)), body
    assert _midaz_amounts(_body(writes[0])) == ["850.00", "600.00", "250.00", "850.00"]
    assert _midaz_amounts(_body(writes[1])) == ["0.50", "0.50", "0.50"]
    accounts = [_body(r) for r in sent if r.method == "POST"
                and r.url.path.endswith("/accounts")]
    assert [(a["type"], a["alias"]) for a in accounts] == [
        ("sisbajud_block", block_account_alias(full)),
        ("sisbajud_block", block_account_alias(partial))]
    results = [_body(r) for r in sent if r.url.host == httpx.URL(MENSAGERIA).host
               and r.url.path.endswith("/execution-results")]
    amounts = [(r["orderId"], name, r[name]) for r in results for name in RESULT_AMOUNTS
               if name in r]
    assert {order_id for order_id, _, _ in amounts} == {full, partial, release, info}
    assert all(isinstance(v, str) and MONEY.match(v) for _, _, v in amounts), amounts
    finals = {r["orderId"]: r for r in results if r["executionState"] == "RESOLVED"}
    assert (finals[full]["requestedAmount"], finals[full]["executedAmount"]) == ("850.00",
                                                                               "850.00")
    assert finals[partial]["executedAmount"] == "0.50"
    assert finals[release]["executedAmount"] == "850.00"
    assert finals[info]["blockableTotal"] == "850.00"
