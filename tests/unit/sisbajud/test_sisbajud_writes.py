"""How ledger answers are read: proof of effect, proof of none, or neither; 409 `0020`."""

from __future__ import annotations

import json
from decimal import Decimal

import httpx
import pytest

from activities.sisbajud.writes import WriteActivities, _classify
from shared.contracts.sisbajud_ledger import EnsureBlockAccountInput, WriteOutcomeKind
from shared.settings import InstitutionSettings, Settings, SisbajudSettings

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


@pytest.mark.parametrize(("status", "code"), [(500, "0095"), (503, "0178"), (504, None),
                                              (409, "0084")])
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
    (404, "0105")])
def test_route_refusals_defer_the_write(status, code):
    outcome = _classify(_response(status, {"code": code, "title": "x"}))
    assert (outcome.kind, outcome.code) == (WriteOutcomeKind.DEFERRED, code)


def test_a_404_without_the_route_code_is_not_a_deferral():
    assert _classify(_response(404, {"code": "0034"})).kind == WriteOutcomeKind.REJECTED


async def test_a_409_0020_on_create_counts_as_found():
    calls: list[str] = []

    def midaz(request: httpx.Request) -> httpx.Response:
        calls.append(f"{request.method} {request.url.path.rsplit('/', 2)[-2]}")
        if request.method == "POST":
            return _response(409, {"code": "0020"})
        if len(calls) == 1:
            return _response(404, {"code": "0085"})
        return _response(200, {"id": "acc-1", "alias": json.dumps("@block")})

    institution = InstitutionSettings(id="B", base_url="http://midaz", organization_id="o",
                                      ledger_id="l")
    settings = Settings(sisbajud=SisbajudSettings(institutions=[institution]))
    async with httpx.AsyncClient(transport=httpx.MockTransport(midaz)) as http:
        activities = WriteActivities(settings, None, http)  # type: ignore[arg-type]
        found = await activities.ensure_block_account(
            EnsureBlockAccountInput(institution_id="B", alias="@block_sisbajud_ab"))
    assert (found.account_id, found.created) == ("acc-1", False)
    assert [c.split()[0] for c in calls] == ["GET", "POST", "GET"]
