"""The Midaz simulator finds accounts by alias through an index, never by a scan of them all.

It shares the CPU with what it is benchmarked against: a scan per request made every order cost
more than the one before.
"""

from __future__ import annotations

import pytest

from services.simulators.midaz import create_app
from services.simulators.midaz.testkit import bootstrap, client, seed_account, send

BLOCK = "@block_sisbajud_0190a1b2c3d4e5f60718293a4b5c6d7e"


class Unscannable(dict):
    """A dict that may be read by key but not walked."""

    def _refuse(self, *args, **kwargs):
        raise AssertionError("the simulator walked every account")

    values = items = __iter__ = _refuse


def _account(alias: str) -> dict:
    return {"assetCode": "BRL", "type": "sisbajud_block", "alias": alias}


@pytest.fixture
async def midaz():
    app = create_app()
    async with client(app) as http:
        ref = await bootstrap(http)
        yield http, ref, app.state.sim


async def test_an_orders_account_calls_read_no_more_than_their_own_accounts(midaz):
    http, ref, state = midaz
    await seed_account(http, ref, "@source", available="100.00")
    for n in range(20):
        await seed_account(http, ref, f"@block_sisbajud_{n:032x}")
    state.accounts = Unscannable(state.accounts)
    state.balances = Unscannable(state.balances)

    created = await http.post(f"{ref.base}/accounts", json=_account(BLOCK))
    assert created.status_code == 201, created.text
    listed = await http.get(f"{ref.base}/accounts", params={"alias": BLOCK})
    assert [a["alias"] for a in listed.json()["items"]] == [BLOCK]
    by_alias = await http.get(f"{ref.base}/accounts/alias/{BLOCK}")
    assert by_alias.json()["id"] == created.json()["id"]
    balances = await http.get(f"{ref.base}/accounts/alias/@source/balances")
    assert balances.json()["items"][0]["available"] == "100"
    posted = await http.post(f"{ref.base}/transactions/json",
                             json=send({"@source": "10.00"}, {BLOCK: "10.00"}))
    assert posted.status_code == 201, posted.text
    again = await http.post(f"{ref.base}/accounts", json=_account(BLOCK))
    assert again.status_code == 409 and again.json()["code"] == "0020"


async def test_a_prefix_listing_keeps_creation_order_across_letter_case(midaz):
    http, ref, _ = midaz
    for alias in ("@cc-b", "@CC-a", "@cc-C", "@other"):
        assert (await http.post(f"{ref.base}/accounts", json=_account(alias))).status_code == 201
    listed = await http.get(f"{ref.base}/accounts", params={"alias": "@Cc-"})
    assert [a["alias"] for a in listed.json()["items"]] == ["@cc-b", "@CC-a", "@cc-C"]


@pytest.mark.parametrize("clash", ["@a_b_long-suffix", "@aXb_long-suffiX", "@x_b_long-suffix"])
async def test_the_like_check_narrows_by_the_literal_ends_without_missing_a_match(midaz, clash):
    http, ref, _ = midaz
    first = await http.post(f"{ref.base}/accounts", json=_account("@aXbYlong-suffix"))
    assert first.status_code == 201
    response = await http.post(f"{ref.base}/accounts", json=_account(clash))
    # `_` matches any one character, case-sensitively elsewhere: only the first pattern matches.
    expected = 409 if clash == "@a_b_long-suffix" else 201
    assert response.status_code == expected, response.text
