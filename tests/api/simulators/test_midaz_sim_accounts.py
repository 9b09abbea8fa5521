"""Midaz simulator: auth, accounts and aliases, balances as decimal strings, error envelopes."""

from __future__ import annotations

import pytest

from services.simulators.midaz import create_app
from services.simulators.midaz.testkit import balance, bootstrap, client, seed_account, send

BLOCK = "@block_sisbajud_0190a1b2c3d4e5f60718293a4b5c6d7e"


@pytest.fixture
async def midaz():
    async with client(create_app()) as http:
        yield http, await bootstrap(http)


def _account(alias: str, type_: str = "sisbajud_block") -> dict:
    return {"assetCode": "BRL", "type": type_, "alias": alias}


@pytest.mark.asyncio
async def test_requests_without_a_bearer_token_get_lib_auths_401():
    async with client(create_app(), authed=False) as http:
        ref = await bootstrap(http)  # /_sim needs no token
        response = await http.get(f"{ref.base}/accounts")
    assert response.status_code == 401
    assert response.text == "Missing Token"


@pytest.mark.asyncio
async def test_by_default_an_opaque_bearer_gets_lib_auths_401_and_an_issued_jwt_passes():
    # Midaz reads every bearer as a JWT (lib-auth): a simulator that let an opaque one through
    # would hide an executor that never asked the auth service.
    app = create_app()
    async with client(app, authed=False) as bare, client(app) as issued:
        ref = await bootstrap(issued)
        refused = await bare.get(f"{ref.base}/accounts",
                                 headers={"Authorization": "Bearer sim-token"})
        accepted = await issued.get(f"{ref.base}/accounts")
    assert refused.status_code == 401 and refused.text == "Unauthorized"
    assert accepted.status_code == 200


@pytest.mark.asyncio
async def test_alias_query_is_a_case_insensitive_prefix_match_and_alias_path_is_exact(midaz):
    http, ref = midaz
    for alias in (BLOCK, BLOCK + "ff", "@cc-1"):
        created = await http.post(f"{ref.base}/accounts", json=_account(alias))
        assert created.status_code == 201, created.text

    listed = await http.get(f"{ref.base}/accounts", params={"alias": BLOCK.upper()})
    assert sorted(a["alias"] for a in listed.json()["items"]) == [BLOCK, BLOCK + "ff"]
    assert listed.json()["page"] == 1

    exact = await http.get(f"{ref.base}/accounts/alias/{BLOCK}")
    assert exact.status_code == 200 and exact.json()["alias"] == BLOCK
    partial = await http.get(f"{ref.base}/accounts/alias/{BLOCK[:-4]}")
    assert partial.status_code == 404 and partial.json()["code"] == "0085"
    by_id = await http.get(f"{ref.base}/accounts/{exact.json()['id']}")
    assert by_id.json()["alias"] == BLOCK


@pytest.mark.asyncio
async def test_duplicate_alias_is_409_0020(midaz):
    http, ref = midaz
    assert (await http.post(f"{ref.base}/accounts", json=_account(BLOCK))).status_code == 201
    again = await http.post(f"{ref.base}/accounts", json=_account(BLOCK))
    assert again.status_code == 409
    assert again.json()["code"] == "0020" and BLOCK in again.json()["detail"]


@pytest.mark.asyncio
async def test_alias_check_treats_underscore_as_a_like_wildcard(midaz):
    http, ref = midaz
    assert (await http.post(f"{ref.base}/accounts", json=_account("@aXb"))).status_code == 201
    clash = await http.post(f"{ref.base}/accounts", json=_account("@a_b"))
    assert clash.status_code == 409 and clash.json()["code"] == "0020"


@pytest.mark.asyncio
async def test_balances_are_decimal_strings_with_trailing_zeros_trimmed(midaz):
    http, ref = midaz
    await seed_account(http, ref, "@cc-1", "100.50")
    await seed_account(http, ref, BLOCK, "0")
    assert (await balance(http, ref, "@cc-1"))["available"] == "100.5"
    # Inputs may be JSON numbers or strings; outputs are always strings.
    body = send({"@cc-1": "0.250"}, {BLOCK: "0.250"})
    body["send"]["value"] = 0.25
    posted = await http.post(f"{ref.base}/transactions/block", json=body)
    assert posted.status_code == 201
    assert posted.json()["amount"] == "0.25"
    assert posted.json()["operations"][0]["amount"]["value"] == "0.25"
    source = await balance(http, ref, "@cc-1")
    assert source["available"] == "100.25" and source["onHold"] == "0"
    assert (await balance(http, ref, BLOCK))["available"] == "0.25"
    assert isinstance(source["version"], int)


@pytest.mark.asyncio
async def test_balances_of_an_unknown_alias_are_an_empty_list(midaz):
    http, ref = midaz
    response = await http.get(f"{ref.base}/accounts/alias/@nobody/balances")
    assert response.status_code == 200 and response.json()["items"] == []


@pytest.mark.asyncio
async def test_unknown_body_field_is_0053_and_missing_field_is_0009(midaz):
    http, ref = midaz
    unknown = await http.post(f"{ref.base}/accounts", json={**_account("@x"), "colour": 1})
    assert unknown.status_code == 400 and unknown.json()["code"] == "0053"
    assert [e["location"] for e in unknown.json()["errors"]] == ["colour"]
    missing = await http.post(f"{ref.base}/accounts", json={"type": "deposit"})
    assert missing.status_code == 400 and missing.json()["code"] == "0009"


@pytest.mark.asyncio
async def test_unregistered_account_type_is_0066_when_the_ledger_validates_types(midaz):
    http, ref = midaz
    await http.patch(f"{ref.base}/settings", json={"accounting": {"validateAccountType": True}})
    refused = await http.post(f"{ref.base}/accounts", json=_account(BLOCK))
    assert refused.status_code == 400 and refused.json()["code"] == "0066"
    await http.post(
        f"{ref.base}/account-types", json={"name": "SISBAJUD block", "keyValue": "sisbajud_block"}
    )
    assert (await http.post(f"{ref.base}/accounts", json=_account(BLOCK))).status_code == 201


@pytest.mark.asyncio
async def test_errors_are_problem_json_by_default_and_hide_5xx_detail(midaz):
    http, ref = midaz
    missing = await http.get(f"{ref.base}/accounts/alias/@nobody")
    assert missing.headers["content-type"].startswith("application/problem+json")
    assert missing.json()["status"] == 404 and missing.json()["code"] == "0085"
    await http.post(
        "/_sim/faults", json={"route": "accounts.list", "kind": "error", "code": "0095"}
    )
    broken = await http.get(f"{ref.base}/accounts")
    assert broken.status_code == 500
    assert broken.json()["code"] == "0095" and broken.json()["detail"] == "internal error"


@pytest.mark.asyncio
async def test_the_v3_flat_error_style_is_still_there(midaz):
    http, ref = midaz
    await http.post("/_sim/config", json={"error_style": "v3"})
    missing = await http.get(f"{ref.base}/accounts/alias/@nobody")
    assert missing.headers["content-type"].startswith("application/json")
    assert missing.json()["code"] == "0085" and missing.json()["message"]


@pytest.mark.asyncio
async def test_invalid_path_uuid_is_0065(midaz):
    http, ref = midaz
    response = await http.get(f"{ref.base}/accounts/not-a-uuid")
    assert response.status_code == 400 and response.json()["code"] == "0065"


@pytest.mark.asyncio
async def test_reset_forgets_everything(midaz):
    http, ref = midaz
    await seed_account(http, ref, "@cc-1", "1")
    await http.post("/_sim/reset")
    response = await http.get(f"{ref.base}/accounts")
    assert response.status_code == 404 and response.json()["code"] == "0038"
