"""Midaz simulator: block/unblock postings, overdraft, lagged metadata search, reads, CRM."""

from __future__ import annotations

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
        await seed_account(http, ref, "@cc-2", "40")
        block = await seed_account(http, ref, BLOCK, "0", type="sisbajud_block")
        yield http, ref, block["id"]


@pytest.mark.asyncio
async def test_block_moves_available_and_types_operations_block(midaz):
    http, ref, _ = midaz
    posted = await http.post(
        f"{ref.base}/transactions/block",
        json=send({"@cc-1": "60", "@cc-2": "40"}, {BLOCK: "100"}, metadata={"code": "w-1"}),
        headers=write_headers("o:1"),
    )
    tx = posted.json()
    assert posted.status_code == 201
    assert tx["source"] == ["@cc-1", "@cc-2"] and tx["destination"] == [BLOCK]
    assert [(op["type"], op["direction"], op["accountAlias"]) for op in tx["operations"]] == [
        ("BLOCK", "debit", "@cc-1"),
        ("BLOCK", "debit", "@cc-2"),
        ("BLOCK", "credit", BLOCK),
    ]
    debit = tx["operations"][0]
    assert debit["balance"]["available"] == "100" and debit["balanceAfter"]["available"] == "40"
    assert (await balance(http, ref, BLOCK))["available"] == "100"
    assert (await balance(http, ref, BLOCK))["onHold"] == "0"  # blocks use available, not hold
    fetched = await http.get(f"{ref.base}/transactions/{tx['id']}")
    assert fetched.json()["status"]["code"] == "APPROVED"


@pytest.mark.asyncio
async def test_unblock_returns_funds_with_unblock_operations(midaz):
    http, ref, _ = midaz
    await http.post(f"{ref.base}/transactions/block", json=send({"@cc-1": "50"}, {BLOCK: "50"}))
    posted = await http.post(
        f"{ref.base}/transactions/unblock", json=send({BLOCK: "20"}, {"@cc-1": "20"})
    )
    assert {op["type"] for op in posted.json()["operations"]} == {"UNBLOCK"}
    assert (await balance(http, ref, BLOCK))["available"] == "30"
    assert (await balance(http, ref, "@cc-1"))["available"] == "70"


@pytest.mark.asyncio
async def test_debit_beyond_available_without_overdraft_is_0018_and_moves_nothing(midaz):
    http, ref, _ = midaz
    refused = await http.post(
        f"{ref.base}/transactions/block", json=send({"@cc-1": "60", "@cc-2": "41"}, {BLOCK: "101"})
    )
    assert refused.status_code == 422 and refused.json()["code"] == "0018"
    # All legs or none: the first leg had enough but was not applied either.
    assert (await balance(http, ref, "@cc-1"))["available"] == "100"
    assert (await balance(http, ref, "@cc-2"))["available"] == "40"


@pytest.mark.asyncio
async def test_overdraft_floors_available_at_zero_and_emits_an_overdraft_operation(midaz):
    http, ref, _ = midaz
    await seed_account(http, ref, "@cc-od", "100", allowOverdraft=True)
    posted = await http.post(
        f"{ref.base}/transactions/block", json=send({"@cc-od": "150"}, {BLOCK: "150"})
    )
    assert posted.status_code == 201
    overdraft = [op for op in posted.json()["operations"] if op["type"] == "OVERDRAFT"]
    assert len(overdraft) == 1
    assert overdraft[0]["balanceKey"] == "overdraft"
    assert overdraft[0]["amount"]["value"] == "50"
    source = await balance(http, ref, "@cc-od")
    assert source["available"] == "0" and source["overdraftUsed"] == "50"


@pytest.mark.asyncio
async def test_overdraft_limit_is_0167(midaz):
    http, ref, _ = midaz
    await seed_account(http, ref, "@cc-od", "100", allowOverdraft=True, overdraftLimit="20")
    refused = await http.post(
        f"{ref.base}/transactions/block", json=send({"@cc-od": "150"}, {BLOCK: "150"})
    )
    assert refused.status_code == 422 and refused.json()["code"] == "0167"
    assert (await balance(http, ref, "@cc-od"))["available"] == "100"


@pytest.mark.asyncio
async def test_metadata_search_and_operations_lag_behind_the_write(midaz):
    http, ref, block_id = midaz
    await http.post("/_sim/config", json={"lag_s": 5})
    posted = await http.post(
        f"{ref.base}/transactions/block",
        json=send({"@cc-1": "10"}, {BLOCK: "10"}, metadata={"code": "w-9"}),
    )
    search = {"metadata.code": "w-9"}
    assert (await http.get(f"{ref.base}/transactions", params=search)).json()["items"] == []
    ops_url = f"{ref.base}/accounts/{block_id}/operations"
    assert (await http.get(ops_url)).json()["items"] == []
    # Balances and GET-by-id already reflect the write (Redis overlay / write-behind cache).
    assert (await balance(http, ref, BLOCK))["available"] == "10"
    assert (await http.get(f"{ref.base}/transactions/{posted.json()['id']}")).status_code == 200

    await http.post("/_sim/clock", json={"advance_s": 5})
    found = (await http.get(f"{ref.base}/transactions", params=search)).json()["items"]
    assert [t["id"] for t in found] == [posted.json()["id"]]
    ops = (await http.get(ops_url)).json()["items"]
    assert [(op["type"], op["direction"]) for op in ops] == [("BLOCK", "credit")]
    other = await http.get(f"{ref.base}/transactions", params={"metadata.code": "w-8"})
    assert other.json()["items"] == []


@pytest.mark.asyncio
async def test_write_without_proof_surfaces_in_reads_after_recovery(midaz):
    http, ref, _ = midaz
    await http.post("/_sim/faults", json={"kind": "write_without_proof", "recovery_s": 30})
    lost = await http.post(
        f"{ref.base}/transactions/block",
        json=send({"@cc-1": "10"}, {BLOCK: "10"}, metadata={"code": "w-2"}),
    )
    assert lost.status_code == 500
    search = {"metadata.code": "w-2"}
    assert (await http.get(f"{ref.base}/transactions", params=search)).json()["items"] == []
    await http.post("/_sim/clock", json={"advance_s": 30})
    (found,) = (await http.get(f"{ref.base}/transactions", params=search)).json()["items"]
    assert found["metadata"]["code"] == "w-2"
    assert (await http.get(f"{ref.base}/transactions/{found['id']}")).status_code == 200


@pytest.mark.asyncio
async def test_lists_default_to_a_one_month_window(midaz):
    http, ref, _ = midaz
    await http.post(
        f"{ref.base}/transactions/block",
        json=send({"@cc-1": "10"}, {BLOCK: "10"}, metadata={"code": "old"}),
    )
    await http.post("/_sim/clock", json={"advance_s": 40 * 86400})
    search = {"metadata.code": "old"}
    assert (await http.get(f"{ref.base}/transactions", params=search)).json()["items"] == []
    wide = {**search, "start_date": "2000-01-01", "end_date": "2100-01-01"}
    assert len((await http.get(f"{ref.base}/transactions", params=wide)).json()["items"]) == 1
    half = await http.get(f"{ref.base}/transactions", params={"start_date": "2000-01-01"})
    assert half.status_code == 400 and half.json()["code"] == "0083"


@pytest.mark.asyncio
async def test_cursor_pagination_walks_every_transaction(midaz):
    http, ref, _ = midaz
    for i in range(3):
        await http.post(
            f"{ref.base}/transactions/block",
            json=send({"@cc-1": "1"}, {BLOCK: "1"}, metadata={"code": f"p{i}"}),
        )
    page = (await http.get(f"{ref.base}/transactions", params={"limit": 2})).json()
    rest = (
        await http.get(
            f"{ref.base}/transactions", params={"limit": 2, "cursor": page["next_cursor"]}
        )
    ).json()
    codes = [t["metadata"]["code"] for t in page["items"] + rest["items"]]
    assert codes == ["p0", "p1", "p2"] and rest["next_cursor"] == ""
    over = await http.get(f"{ref.base}/transactions", params={"limit": 101})
    assert over.json()["code"] == "0080"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (send({"@cc-1": "10"}, {BLOCK: "9"}), "0073"),
        (send({"@nobody": "10"}, {BLOCK: "10"}), "0019"),
        (send({"@cc-1": "10"}, {"@cc-1": "10"}), "0090"),
        (send({"@cc-1": "0"}, {BLOCK: "0"}), "0125"),
    ],
)
@pytest.mark.asyncio
async def test_invalid_postings_use_midaz_codes(midaz, body, code):
    http, ref, _ = midaz
    refused = await http.post(f"{ref.base}/transactions/block", json=body)
    assert refused.json()["code"] == code
    assert (await balance(http, ref, "@cc-1"))["available"] == "100"


@pytest.mark.asyncio
async def test_timeout_fault_on_a_read_answers_504_after_the_delay(midaz):
    http, ref, _ = midaz
    await http.post(
        "/_sim/faults", json={"route": "balances.by_alias", "kind": "timeout", "delay_s": 0.05}
    )
    slow = await http.get(f"{ref.base}/accounts/alias/@cc-1/balances")
    assert slow.status_code == 504
    assert (await http.get(f"{ref.base}/accounts/alias/@cc-1/balances")).status_code == 200


@pytest.mark.asyncio
async def test_crm_finds_a_subjects_accounts_by_document(midaz):
    http, ref, _ = midaz
    cc = (await http.get(f"{ref.base}/accounts/alias/@cc-1")).json()
    await http.post(
        "/_sim/crm/instruments",
        json=[
            {
                "organizationId": ref.organization_id,
                "document": "12345678900",
                "ledgerId": ref.ledger_id,
                "accountId": cc["id"],
                "bankingDetails": {"branch": "0001", "account": "123", "type": "CACC"},
            },
            {
                "organizationId": ref.organization_id,
                "document": "99999999999",
                "ledgerId": ref.ledger_id,
                "accountId": "x",
            },
        ],
    )
    legacy = await http.get(
        "/v1/aliases",
        params={"document": "12345678900"},
        headers={"X-Organization-Id": ref.organization_id},
    )
    embedded = await http.get(
        f"/v1/organizations/{ref.organization_id}/instruments", params={"document": "12345678900"}
    )
    for response in (legacy, embedded):
        assert [i["accountId"] for i in response.json()["items"]] == [cc["id"]]
    assert (await http.get("/v1/aliases", params={"document": "1"})).json()["code"] == "0009"
