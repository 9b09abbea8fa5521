"""Midaz simulator: X-Idempotency replay, claimed-but-empty keys (409 0084) and their TTL."""

from __future__ import annotations

import asyncio

import pytest

from services.simulators.midaz import create_app
from services.simulators.midaz.testkit import (
    balance,
    bootstrap,
    client,
    seed_account,
    send,
    write_headers,
)

BLOCK = "@block_sisbajud_0190a1b2c3d4e5f60718293a4b5c6d7e"


@pytest.fixture
async def midaz():
    async with client(create_app()) as http:
        ref = await bootstrap(http)
        await seed_account(http, ref, "@cc-1", "100")
        await seed_account(http, ref, BLOCK, "0", type="sisbajud_block")
        yield http, ref


async def _tx_count(http) -> int:
    return len((await http.get("/_sim/transactions")).json())


@pytest.mark.asyncio
async def test_replay_returns_original_201_with_header_and_moves_balances_once(midaz):
    http, ref = midaz
    body = send({"@cc-1": "30"}, {BLOCK: "30"})
    first = await http.post(
        f"{ref.base}/transactions/block", json=body, headers=write_headers("order-1:1")
    )
    again = await http.post(
        f"{ref.base}/transactions/block", json=body, headers=write_headers("order-1:1")
    )
    assert first.status_code == 201 and first.headers["X-Idempotency-Replayed"] == "false"
    assert again.status_code == 201 and again.headers["X-Idempotency-Replayed"] == "true"
    assert again.json() == first.json()
    assert first.json()["status"]["code"] == "CREATED"
    assert (await balance(http, ref, "@cc-1"))["available"] == "70"
    assert (await balance(http, ref, BLOCK))["available"] == "30"
    assert await _tx_count(http) == 1


@pytest.mark.asyncio
async def test_replay_ignores_a_different_body_under_the_same_key(midaz):
    http, ref = midaz
    first = await http.post(
        f"{ref.base}/transactions/block",
        json=send({"@cc-1": "30"}, {BLOCK: "30"}),
        headers=write_headers("order-1:1"),
    )
    other = await http.post(
        f"{ref.base}/transactions/block",
        json=send({"@cc-1": "50"}, {BLOCK: "50"}),
        headers=write_headers("order-1:1"),
    )
    assert other.status_code == 201 and other.headers["X-Idempotency-Replayed"] == "true"
    assert other.json()["id"] == first.json()["id"] and other.json()["amount"] == "30"
    assert (await balance(http, ref, "@cc-1"))["available"] == "70"


@pytest.mark.asyncio
async def test_write_without_proof_gives_409_0084_until_ttl_then_executes_again(midaz):
    http, ref = midaz
    await http.post(
        "/_sim/faults", json={"route": "transactions.create.block", "kind": "write_without_proof"}
    )
    body = send({"@cc-1": "30"}, {BLOCK: "30"})
    headers = write_headers("order-1:1", ttl_s=60)

    lost = await http.post(f"{ref.base}/transactions/block", json=body, headers=headers)
    assert lost.status_code == 500 and lost.json()["code"] == "0095"
    assert (await balance(http, ref, "@cc-1"))["available"] == "70"  # it did move

    retry = await http.post(f"{ref.base}/transactions/block", json=body, headers=headers)
    assert retry.status_code == 409
    assert retry.json()["code"] == "0084"
    assert retry.json()["title"] == "Duplicate Idempotency Key"
    assert (await balance(http, ref, "@cc-1"))["available"] == "70"

    await http.post("/_sim/clock", json={"advance_s": 59})
    still = await http.post(f"{ref.base}/transactions/block", json=body, headers=headers)
    assert still.status_code == 409

    await http.post("/_sim/clock", json={"advance_s": 2})
    after_ttl = await http.post(f"{ref.base}/transactions/block", json=body, headers=headers)
    # Past the TTL the key is gone: Midaz executes again, which is why the executor must
    # reconcile an indeterminate write before the TTL rather than blindly retrying.
    assert after_ttl.status_code == 201
    assert after_ttl.headers["X-Idempotency-Replayed"] == "false"
    assert (await balance(http, ref, "@cc-1"))["available"] == "40"
    assert await _tx_count(http) == 2


@pytest.mark.asyncio
async def test_failure_before_balances_move_releases_the_key(midaz):
    http, ref = midaz
    body = send({"@cc-1": "150"}, {BLOCK: "150"})
    headers = write_headers("order-2:1")
    refused = await http.post(f"{ref.base}/transactions/block", json=body, headers=headers)
    assert refused.status_code == 422 and refused.json()["code"] == "0018"
    assert (await balance(http, ref, "@cc-1"))["available"] == "100"

    inflow = {
        "send": {
            "asset": "BRL",
            "value": "50",
            "distribute": {
                "to": [{"accountAlias": "@cc-1", "amount": {"asset": "BRL", "value": "50"}}]
            },
        }
    }
    assert (await http.post(f"{ref.base}/transactions/inflow", json=inflow)).status_code == 201

    retried = await http.post(f"{ref.base}/transactions/block", json=body, headers=headers)
    assert retried.status_code == 201
    assert retried.headers["X-Idempotency-Replayed"] == "false"
    assert (await balance(http, ref, "@cc-1"))["available"] == "0"


@pytest.mark.asyncio
async def test_injected_route_rejection_releases_the_key(midaz):
    http, ref = midaz
    await http.post("/_sim/faults", json={"kind": "reject", "code": "0117"})
    body = send({"@cc-1": "10"}, {BLOCK: "10"})
    rejected = await http.post(
        f"{ref.base}/transactions/block", json=body, headers=write_headers("order-3:1")
    )
    assert rejected.status_code == 422 and rejected.json()["code"] == "0117"
    assert (await balance(http, ref, "@cc-1"))["available"] == "100"
    retried = await http.post(
        f"{ref.base}/transactions/block", json=body, headers=write_headers("order-3:1")
    )
    assert retried.status_code == 201 and retried.headers["X-Idempotency-Replayed"] == "false"


@pytest.mark.asyncio
async def test_error_fault_answers_before_claiming_the_key(midaz):
    http, ref = midaz
    await http.post("/_sim/faults", json={"kind": "error", "status": 503, "count": 2})
    body = send({"@cc-1": "10"}, {BLOCK: "10"})
    for _ in range(2):
        failed = await http.post(
            f"{ref.base}/transactions/block", json=body, headers=write_headers("order-4:1")
        )
        assert failed.status_code == 503
    ok = await http.post(
        f"{ref.base}/transactions/block", json=body, headers=write_headers("order-4:1")
    )
    assert ok.status_code == 201 and ok.headers["X-Idempotency-Replayed"] == "false"
    assert (await balance(http, ref, "@cc-1"))["available"] == "90"


@pytest.mark.asyncio
async def test_response_lost_after_write_is_replayed_on_retry(midaz):
    http, ref = midaz
    await http.post("/_sim/faults", json={"kind": "timeout_after_write", "delay_s": 30})
    body = send({"@cc-1": "10"}, {BLOCK: "10"})
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(
            http.post(
                f"{ref.base}/transactions/block", json=body, headers=write_headers("order-5:1")
            ),
            timeout=0.2,
        )
    assert (await balance(http, ref, "@cc-1"))["available"] == "90"
    retried = await http.post(
        f"{ref.base}/transactions/block", json=body, headers=write_headers("order-5:1")
    )
    assert retried.status_code == 201 and retried.headers["X-Idempotency-Replayed"] == "true"
    assert (await balance(http, ref, "@cc-1"))["available"] == "90"


@pytest.mark.asyncio
async def test_without_a_key_identical_bodies_dedupe_for_300_seconds(midaz):
    http, ref = midaz
    body = send({"@cc-1": "10"}, {BLOCK: "10"})
    first = await http.post(f"{ref.base}/transactions/block", json=body)
    second = await http.post(f"{ref.base}/transactions/block", json=body)
    assert second.headers["X-Idempotency-Replayed"] == "true"
    assert second.json()["id"] == first.json()["id"]
    await http.post("/_sim/clock", json={"advance_s": 301})
    third = await http.post(f"{ref.base}/transactions/block", json=body)
    assert third.headers["X-Idempotency-Replayed"] == "false"
    assert (await balance(http, ref, "@cc-1"))["available"] == "80"


@pytest.mark.asyncio
async def test_keys_are_scoped_per_ledger(midaz):
    http, ref = midaz
    other = await bootstrap(http, organizationId=ref.organization_id)
    await seed_account(http, other, "@cc-1", "100")
    await seed_account(http, other, BLOCK, "0")
    body = send({"@cc-1": "10"}, {BLOCK: "10"})
    a = await http.post(f"{ref.base}/transactions/block", json=body, headers=write_headers("same"))
    b = await http.post(
        f"{other.base}/transactions/block", json=body, headers=write_headers("same")
    )
    assert a.headers["X-Idempotency-Replayed"] == "false"
    assert b.headers["X-Idempotency-Replayed"] == "false"
    assert a.json()["id"] != b.json()["id"]


@pytest.mark.asyncio
async def test_flushing_the_store_forgets_keys(midaz):
    http, ref = midaz
    body = send({"@cc-1": "10"}, {BLOCK: "10"})
    await http.post(f"{ref.base}/transactions/block", json=body, headers=write_headers("k"))
    await http.post("/_sim/idempotency/flush")
    again = await http.post(f"{ref.base}/transactions/block", json=body, headers=write_headers("k"))
    assert again.headers["X-Idempotency-Replayed"] == "false"
    assert (await balance(http, ref, "@cc-1"))["available"] == "80"
