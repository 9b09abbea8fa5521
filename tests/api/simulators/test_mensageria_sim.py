"""Mensageria simulator: order fetch answers (the seed's "Respostas da busca") and results."""

from __future__ import annotations

import httpx
import pytest

from services.simulators.mensageria import create_app
from services.simulators.oauth import IssuedBearer

ORDERS = "/v1/sisbajud/execution/orders"
ORDER_ID = "0190a1b2c3d4e5f60718293a4b5c6d7e"
ORDER = {
    "orderId": ORDER_ID,
    "revision": 3,
    "operation": "BLOQUEIO",
    "amount": "150.00",
    "subject": {"document": "12345678900"},
}
RESULT = {"executionState": "RESOLVED", "effect": "FULL", "reasonCode": "BLOCKED_TOTAL"}


def _client(app, token: str | None = None, *, authed: bool = True) -> httpx.AsyncClient:
    """Tokens the simulator issued; `token`: that bearer instead; `authed=False`: none."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://mensageria", headers=headers,
        auth=IssuedBearer(app) if authed and not token else None,
    )


@pytest.fixture
async def mensageria():
    async with _client(create_app()) as http:
        assert (await http.post("/_sim/orders", json=ORDER)).status_code == 201
        yield http


def _results_url(order_id: str = ORDER_ID) -> str:
    return f"{ORDERS}/{order_id}/execution-results"


@pytest.mark.asyncio
async def test_seeded_order_is_served_as_seeded(mensageria):
    response = await mensageria.get(f"{ORDERS}/{ORDER['orderId']}")
    assert response.status_code == 200 and response.json() == ORDER


@pytest.mark.asyncio
async def test_unknown_order_is_404(mensageria):
    assert (await mensageria.get(f"{ORDERS}/nope")).status_code == 404


@pytest.mark.parametrize("status", [404, 410])
@pytest.mark.asyncio
async def test_withdrawn_order_answers_404_or_410(mensageria, status):
    await mensageria.post(f"/_sim/orders/{ORDER['orderId']}/withdraw", json={"status": status})
    response = await mensageria.get(f"{ORDERS}/{ORDER['orderId']}")
    assert response.status_code == status and response.json()["code"] == "ORDER_WITHDRAWN"


@pytest.mark.asyncio
async def test_a_new_revision_replaces_the_order_and_clears_a_withdrawal(mensageria):
    await mensageria.post(f"/_sim/orders/{ORDER['orderId']}/withdraw", json={"status": 410})
    await mensageria.post("/_sim/orders", json={**ORDER, "revision": 4})
    response = await mensageria.get(f"{ORDERS}/{ORDER['orderId']}")
    assert response.status_code == 200 and response.json()["revision"] == 4


@pytest.mark.asyncio
async def test_missing_or_wrong_bearer_token_is_401():
    app = create_app()
    async with (
        _client(app, authed=False) as anonymous,
        _client(app, token="other") as wrong,
        _client(app) as good,
    ):
        await good.post("/_sim/orders", json=ORDER)
        assert (await anonymous.get(f"{ORDERS}/{ORDER['orderId']}")).status_code == 401
        assert (await wrong.get(f"{ORDERS}/{ORDER['orderId']}")).status_code == 401
        assert (await good.get(f"{ORDERS}/{ORDER['orderId']}")).status_code == 200


@pytest.mark.parametrize("status", [401, 429, 500, 502, 503, 403, 422])
@pytest.mark.asyncio
async def test_injected_status_applies_to_the_next_n_fetches_only(mensageria, status):
    await mensageria.post(
        "/_sim/faults", json={"route": "orders.get", "status": status, "count": 2, "retry_after": 7}
    )
    for _ in range(2):
        failed = await mensageria.get(f"{ORDERS}/{ORDER['orderId']}")
        assert failed.status_code == status and failed.headers["retry-after"] == "7"
    assert (await mensageria.get(f"{ORDERS}/{ORDER['orderId']}")).status_code == 200


@pytest.mark.asyncio
async def test_timeout_fault_holds_then_answers_504(mensageria):
    await mensageria.post(
        "/_sim/faults", json={"route": "orders.get", "kind": "timeout", "delay_s": 0.05}
    )
    assert (await mensageria.get(f"{ORDERS}/{ORDER['orderId']}")).status_code == 504


@pytest.mark.asyncio
async def test_results_are_deduplicated_by_idempotency_key(mensageria):
    first = await mensageria.post(_results_url(), json=RESULT, headers={"X-Idempotency": "k1"})
    again = await mensageria.post(_results_url(), json=RESULT, headers={"X-Idempotency": "k1"})
    other = await mensageria.post(
        _results_url(),
        json={**RESULT, "executionState": "MONITORING", "effect": "INDETERMINATE"},
        headers={"X-Idempotency": "k2"},
    )
    assert first.status_code == again.status_code == other.status_code == 201
    assert first.headers["X-Idempotency-Replayed"] == "false"
    assert again.headers["X-Idempotency-Replayed"] == "true"
    seen = (await mensageria.get("/_sim/results")).json()
    assert [(r["idempotencyKey"], r["deliveries"]) for r in seen["results"]] == [
        ("k1", 2),
        ("k2", 1),
    ]
    assert seen["results"][0]["body"] == RESULT
    assert [a["outcome"] for a in seen["attempts"]] == ["accepted", "replayed", "accepted"]
    assert seen["keys"] == ["k1", "k2"]


@pytest.mark.asyncio
async def test_a_different_body_under_a_used_key_is_flagged_not_stored(mensageria):
    await mensageria.post(_results_url(), json=RESULT, headers={"X-Idempotency": "k1"})
    await mensageria.post(
        _results_url(), json={**RESULT, "effect": "PARTIAL"}, headers={"X-Idempotency": "k1"}
    )
    seen = (await mensageria.get("/_sim/results")).json()
    assert seen["results"][0]["body"]["effect"] == "FULL"
    assert [a["conflicting"] for a in seen["attempts"]] == [False, True]


@pytest.mark.asyncio
async def test_accept_then_fail_stores_the_result_and_the_retry_is_a_replay(mensageria):
    await mensageria.post(
        "/_sim/faults", json={"route": "results.post", "kind": "accept_then_fail"}
    )
    lost = await mensageria.post(_results_url(), json=RESULT, headers={"X-Idempotency": "k1"})
    assert lost.status_code == 500
    retry = await mensageria.post(_results_url(), json=RESULT, headers={"X-Idempotency": "k1"})
    assert retry.status_code == 201 and retry.headers["X-Idempotency-Replayed"] == "true"
    assert len((await mensageria.get("/_sim/results")).json()["results"]) == 1


@pytest.mark.asyncio
async def test_status_fault_on_results_stores_nothing(mensageria):
    await mensageria.post("/_sim/faults", json={"route": "results.post", "status": 503})
    failed = await mensageria.post(_results_url(), json=RESULT, headers={"X-Idempotency": "k1"})
    assert failed.status_code == 503
    seen = (await mensageria.get("/_sim/results")).json()
    assert seen["results"] == [] and seen["attempts"][0]["outcome"] == "refused-503"


@pytest.mark.asyncio
async def test_a_result_without_idempotency_key_is_400_and_not_stored(mensageria):
    response = await mensageria.post(_results_url(), json=RESULT)
    assert response.status_code == 400 and response.json()["code"] == "IDEMPOTENCY_KEY_REQUIRED"
    assert (await mensageria.get("/_sim/results")).json()["results"] == []


@pytest.mark.parametrize(
    "bad", [{**RESULT, "executionState": "DONE"}, {**RESULT, "effect": "SOME"}, {"effect": "FULL"}]
)
@pytest.mark.asyncio
async def test_a_result_outside_the_seed_enums_is_422_and_not_stored(mensageria, bad):
    response = await mensageria.post(_results_url(), json=bad, headers={"X-Idempotency": "k"})
    assert response.status_code == 422
    assert (await mensageria.get("/_sim/results")).json()["results"] == []


@pytest.mark.asyncio
async def test_results_can_be_read_per_order_and_reset(mensageria):
    await mensageria.post(_results_url(), json=RESULT, headers={"X-Idempotency": "a"})
    await mensageria.post(_results_url("other"), json=RESULT, headers={"X-Idempotency": "b"})
    mine = (await mensageria.get("/_sim/results", params={"orderId": "other"})).json()
    assert [r["idempotencyKey"] for r in mine["results"]] == ["b"]
    await mensageria.post("/_sim/reset")
    assert (await mensageria.get("/_sim/results")).json()["attempts"] == []
    assert (await mensageria.get(f"{ORDERS}/{ORDER['orderId']}")).status_code == 404


@pytest.mark.asyncio
async def test_a_poller_reads_only_the_results_after_the_last_seq_it_saw(mensageria):
    for key in ("a", "b", "c"):
        await mensageria.post(_results_url(), json=RESULT, headers={"X-Idempotency": key})
    await mensageria.post(_results_url(), json=RESULT, headers={"X-Idempotency": "a"})  # replay
    newer = (await mensageria.get("/_sim/results", params={"since": 1, "attempts": "false"})).json()
    assert newer == {"results": newer["results"]}  # no attempts, no keys: only what is new
    assert [(r["idempotencyKey"], r["seq"]) for r in newer["results"]] == [("b", 2), ("c", 3)]
    caught_up = await mensageria.get("/_sim/results", params={"since": 3, "attempts": "false"})
    assert caught_up.json()["results"] == []


@pytest.mark.parametrize(("amount", "status"), [("850.00", 201), ("850.125", 201),
                                                ("850", 422), ("850.5", 422), (850, 422)])
async def test_result_amounts_must_carry_two_places(mensageria, amount, status):
    response = await mensageria.post(_results_url(), json={**RESULT, "executedAmount": amount},
                                     headers={"X-Idempotency": f"k-{amount!r}"})
    assert response.status_code == status
    if status == 422:
        assert response.json()["code"] == "INVALID_RESULT"
