"""How ledger answers are read: proof of effect, proof of none, or neither; 409 `0020`."""

from __future__ import annotations

import json
from decimal import Decimal

import httpx
import pytest

from activities.sisbajud.contracts.ledger import (
    EnsureBlockAccountInput,
    Leg,
    WriteInput,
    WriteKind,
    WriteOutcomeKind,
)
from activities.sisbajud.contracts.orders import Operation, Order
from activities.sisbajud.writes import WriteActivities, _classify, _transaction_body
from shared.settings import InstitutionSettings, Settings, SisbajudSettings
from tests.support.tokens import is_token_request, token_answer

TX = {"id": "tx-1", "amount": "150", "operations": [
    {"type": "BLOCK", "balanceKey": "default", "direction": "debit"}]}


def _response(status: int, body: dict, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers)


def test_201_is_applied_and_a_replay_is_flagged():
    outcome = _classify(_response(201, TX, **{"X-Idempotency-Replayed": "true"}))
    assert outcome.kind == WriteOutcomeKind.APPLIED and outcome.replayed
    assert (outcome.transaction_id, outcome.amount) == ("tx-1", Decimal(150))
    assert not outcome.overdraft_touched


def test_an_overdraft_companion_operation_is_noticed():
    body = {**TX, "operations": [*TX["operations"],
                                 {"type": "OVERDRAFT", "balanceKey": "overdraft"}]}
    assert _classify(_response(201, body)).overdraft_touched


@pytest.mark.parametrize(("status", "code"), [(500, "0095"), (503, "0095"), (503, None),
                                              (504, None), (409, "0084")])
def test_answers_without_proof_are_indeterminate(status, code):
    outcome = _classify(_response(status, {"code": code} if code else {}))
    assert outcome.kind == WriteOutcomeKind.INDETERMINATE


@pytest.mark.parametrize(("code", "replan"), [("0018", True), ("0174", True), ("0086", True),
                                              ("0024", False), ("0019", False),
                                              ("0151", False)])
def test_refusals_before_any_effect_are_rejected(code, replan):
    outcome = _classify(_response(422, {"code": code, "title": "x"}))
    assert outcome.kind == WriteOutcomeKind.REJECTED and outcome.retry_with_new_plan is replan


@pytest.mark.parametrize(("status", "code"), [
    *((422, c) for c in ("0113", "0114", "0116", "0117", "0118", "0119", "0152", "0157")),
    (404, "0105"),
    # Midaz's fail-closed reservation: rejected before any balance moves, the key released.
    (503, "0178")])
def test_refusals_that_moved_nothing_defer_the_write(status, code):
    outcome = _classify(_response(status, {"code": code, "title": "x"}))
    assert (outcome.kind, outcome.code) == (WriteOutcomeKind.DEFERRED, code)


def test_a_404_without_the_route_code_is_not_a_deferral():
    assert _classify(_response(404, {"code": "0034"})).kind == WriteOutcomeKind.REJECTED


def _token(request: httpx.Request) -> httpx.Response:
    return token_answer(request)


def _institution(**fields) -> InstitutionSettings:
    return InstitutionSettings(id="B", base_url="http://midaz", organization_id="o",
                               ledger_id="l", **fields)


async def test_a_409_0020_on_create_counts_as_found():
    calls: list[str] = []

    def midaz(request: httpx.Request) -> httpx.Response:
        if is_token_request(request):
            return _token(request)
        calls.append(f"{request.method} {request.url.path.rsplit('/', 2)[-2]}")
        if request.method == "POST":
            return _response(409, {"code": "0020"})
        return _response(200, {"id": "acc-1", "alias": json.dumps("@block")})

    institution = _institution(alias_lookup="exact")
    settings = Settings(sisbajud=SisbajudSettings(institutions=[institution]))
    async with httpx.AsyncClient(transport=httpx.MockTransport(midaz)) as http:
        activities = WriteActivities(settings, None, http)  # type: ignore[arg-type]
        found = await activities.ensure_block_account(
            EnsureBlockAccountInput(institution_id="B", alias="@block_sisbajud_ab"))
    assert (found.account_id, found.created) == ("acc-1", False)
    assert [c.split()[0] for c in calls] == ["POST", "GET"]


async def test_a_new_block_account_is_created_without_a_lookup():
    calls: list[str] = []

    def midaz(request: httpx.Request) -> httpx.Response:
        if is_token_request(request):
            return _token(request)
        calls.append(request.method)
        return _response(201, {"id": "acc-9", "alias": "@block_sisbajud_ab"})

    settings = Settings(sisbajud=SisbajudSettings(institutions=[_institution()]))
    async with httpx.AsyncClient(transport=httpx.MockTransport(midaz)) as http:
        made = await WriteActivities(settings, None, http).ensure_block_account(  # type: ignore[arg-type]
            EnsureBlockAccountInput(institution_id="B", alias="@block_sisbajud_ab"))
    assert (made.account_id, made.created, calls) == ("acc-9", True, ["POST"])


@pytest.mark.parametrize(("lookup", "path", "query"), [
    ("query", "/v1/organizations/o/ledgers/l/accounts", "alias=%40block_sisbajud_ab&limit=100"),
    ("exact", "/v1/organizations/o/ledgers/l/accounts/alias/@block_sisbajud_ab", "")])
async def test_the_alias_lookup_follows_the_institution(lookup, path, query):
    seen: list[httpx.URL] = []

    def midaz(request: httpx.Request) -> httpx.Response:
        if is_token_request(request):
            return _token(request)
        if request.method == "POST":
            return _response(409, {"code": "0020"})  # made by an earlier attempt
        seen.append(request.url)
        if lookup == "exact":
            return _response(200, {"id": "acc-2", "alias": "@block_sisbajud_ab"})
        # `?alias=` is a prefix match: the longer alias must not be taken for ours.
        return _response(200, {"items": [{"id": "acc-1", "alias": "@block_sisbajud_abc"},
                                         {"id": "acc-2", "alias": "@block_sisbajud_ab"}]})

    settings = Settings(sisbajud=SisbajudSettings(
        institutions=[_institution(alias_lookup=lookup)]))
    async with httpx.AsyncClient(transport=httpx.MockTransport(midaz)) as http:
        found = await WriteActivities(settings, None, http).ensure_block_account(  # type: ignore[arg-type]
            EnsureBlockAccountInput(institution_id="B", alias="@block_sisbajud_ab"))
    assert found.account_id == "acc-2"
    assert [(u.path, u.query.decode()) for u in seen] == [(path, query)]


def test_the_ledger_write_carries_amounts_with_two_places():
    order = Order(order_id="0190a000-0000-7000-8000-00000000d001", revision=1,
                  operation=Operation.BLOQUEIO, institution_id="B", document="1",
                  amount=Decimal("850"))
    body = _transaction_body(WriteInput(
        order=order, kind=WriteKind.BLOCK, idempotency_key="k", block_alias="@block",
        legs=[Leg(account_alias="@a", amount=Decimal("600")),
              Leg(account_alias="@b", amount=Decimal("250.0"))],
        total=Decimal("850")), "BRL")
    send = body["send"]
    assert send["value"] == "850.00"
    assert [leg["amount"]["value"] for leg in send["source"]["from"]] == ["600.00", "250.00"]
    assert send["distribute"]["to"][0]["amount"]["value"] == "850.00"
