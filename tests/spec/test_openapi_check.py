"""The checker itself: each way an exchange can depart from Midaz's document is caught."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.spec.midaz_overrides import OVERRIDES
from tests.support.openapi_check import Exchange, OpenApiDocument

ORG = "0190b000-0000-7000-8000-0000000000a1"
LEDGER = "0190b000-0000-7000-8000-0000000000a2"
BASE = f"/v1/organizations/{ORG}/ledgers/{LEDGER}"


@pytest.fixture(scope="module")
def document() -> OpenApiDocument:
    return OpenApiDocument(Path(__file__).parent / "midaz" / "openapi.huma.yaml", prefix="/v1",
                           overrides=OVERRIDES)


def _exchange(method: str, path: str, status: int, answer: object, *,
              media: str = "application/json", body: object = None) -> Exchange:
    raw = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
    return Exchange(method, path, {}, "application/json" if body is not None else "",
                    json.dumps(body).encode() if body is not None else b"", status, media, raw)


def test_the_v2_instruments_route_is_no_midaz_operation(document):
    (problem,) = document.check(_exchange("GET", f"/v2/organizations/{ORG}/instruments", 200,
                                          {"items": [], "limit": 10}))
    assert "no such operation" in problem


def test_a_flat_v3_error_is_not_midaz_4s_problem_json(document):
    (problem,) = document.check(_exchange("GET", f"{BASE}/accounts/alias/@x", 404,
                                          {"code": "0085", "title": "t", "message": "m"}))
    assert "application/problem+json" in problem


def test_a_missing_always_sent_field_and_a_null_midaz_omits_are_caught(document):
    problems = document.check(_exchange("POST", f"{BASE}/transactions/block", 201, {
        "id": "t"}, body={"send": {"asset": "BRL", "value": "1.00",
                                   "source": {"from": [{"accountAlias": "@a"}]},
                                   "distribute": {"to": [{"accountAlias": "@b"}]}}}))
    assert any("'feesSkipped' is a required property" in p for p in problems)


def test_a_request_body_is_checked_against_midazs_go_input_struct(document):
    problems = document.check(_exchange("POST", f"{BASE}/accounts", 201, {}, body={
        "assetCode": "BRL", "type": "sisbajud_block", "colour": "red"}))
    assert any("request" in p and "colour" in p for p in problems)


def test_only_lib_auths_own_401_texts_pass(document):
    ok = _exchange("GET", f"{BASE}/accounts", 401, b"Unauthorized", media="text/plain")
    other = _exchange("GET", f"{BASE}/accounts", 401, b"nope", media="text/plain")
    assert document.check(ok) == [] and len(document.check(other)) == 1
