"""The codec server the Temporal Web UI calls: authenticated, CORS for the UI's origin only."""

from __future__ import annotations

import base64
import json

import pytest
from google.protobuf.json_format import MessageToDict
from temporalio.api.common.v1 import Payload, Payloads

from services.api.routes.temporal_codec import PREFIX
from services.dashboard.session import SESSION_COOKIE
from shared.payload_codec import ENCODING, EncryptionCodec
from shared.temporal import payload_keys
from tests.api.conftest import API_KEY
from tests.dashboard.conftest import csrf_of

SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])
UI_ORIGIN = "http://127.0.0.1:8233"
CLEAR = b'{"document":"12345678900"}'


async def _sealed(web) -> dict:
    codec = EncryptionCodec(payload_keys(web.context.settings))
    payloads = await codec.encode([Payload(metadata={"encoding": b"json/plain"}, data=CLEAR)])
    return MessageToDict(Payloads(payloads=payloads))


def _data(body: dict) -> list[bytes]:
    return [base64.b64decode(p["data"]) for p in body["payloads"]]


@SQLITE_ONLY
async def test_decode_needs_the_api_key_or_an_operator(web):
    sealed = await _sealed(web)
    anonymous = await web.post(f"{PREFIX}/decode", json=sealed)
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "auth.missing-key"
    wrong = await web.post(f"{PREFIX}/decode", json=sealed,
                           headers={"Authorization": "Bearer not-the-key"})
    assert wrong.status_code == 401
    for headers in ({"X-API-Key": API_KEY}, {"Authorization": f"Bearer {API_KEY}"}):
        answer = await web.post(f"{PREFIX}/decode", json=sealed, headers=headers)
        assert answer.status_code == 200, answer.text
        assert _data(answer.json()) == [CLEAR]


@SQLITE_ONLY
async def test_a_signed_in_operator_decodes_from_the_ui_origin(operator):
    sealed = await _sealed(operator)
    answer = await operator.post(f"{PREFIX}/decode", json=sealed,
                                 headers={"Origin": UI_ORIGIN, "X-Namespace": "default"})
    assert answer.status_code == 200 and _data(answer.json()) == [CLEAR]
    assert answer.headers["Access-Control-Allow-Origin"] == UI_ORIGIN
    assert answer.headers["Access-Control-Allow-Credentials"] == "true"


@SQLITE_ONLY
async def test_preflight_allows_the_ui_origin_only(web):
    asked = {"Access-Control-Request-Method": "POST",
             "Access-Control-Request-Headers": "content-type,x-namespace"}
    ui = await web.options(f"{PREFIX}/decode", headers={"Origin": UI_ORIGIN, **asked})
    assert ui.status_code == 204
    assert ui.headers["Access-Control-Allow-Origin"] == UI_ORIGIN
    assert "X-Namespace" in ui.headers["Access-Control-Allow-Headers"]
    assert "POST" in ui.headers["Access-Control-Allow-Methods"]
    other = await web.options(f"{PREFIX}/decode",
                              headers={"Origin": "http://evil.example", **asked})
    assert "Access-Control-Allow-Origin" not in other.headers
    # A page elsewhere can't read a decode either, even with the key.
    answer = await web.post(f"{PREFIX}/decode", json=await _sealed(web),
                            headers={"Origin": "http://evil.example", "X-API-Key": API_KEY})
    assert "Access-Control-Allow-Origin" not in answer.headers


@SQLITE_ONLY
async def test_encode_then_decode_and_plain_payloads_pass(web):
    key = {"X-API-Key": API_KEY}
    plain = MessageToDict(Payloads(payloads=[Payload(metadata={"encoding": b"json/plain"},
                                                     data=CLEAR)]))
    encoded = (await web.post(f"{PREFIX}/encode", json=plain, headers=key)).json()
    assert base64.b64decode(encoded["payloads"][0]["metadata"]["encoding"]) == ENCODING
    assert CLEAR not in _data(encoded)[0]
    decoded = (await web.post(f"{PREFIX}/decode", json=encoded, headers=key)).json()
    assert decoded == plain
    passed = (await web.post(f"{PREFIX}/decode", json=plain, headers=key)).json()
    assert passed == plain


@SQLITE_ONLY
@pytest.mark.parametrize(("path", "body"), [
    ("decode", {"payloads": "nope"}), ("decode", [1, 2]), ("verify", {"payloads": []})])
async def test_bad_requests_are_refused_with_the_house_code(web, path, body):
    answer = await web.post(f"{PREFIX}/{path}", json=body, headers={"X-API-Key": API_KEY})
    assert answer.status_code == 422 and answer.json()["code"] == "request.invalid"


@SQLITE_ONLY
async def test_a_form_post_with_the_cookie_is_not_a_codec_call(operator):
    """A cross-site form can send text/plain without a preflight: refused before decoding."""
    sealed = await _sealed(operator)
    answer = await operator.post(f"{PREFIX}/decode", content=json.dumps(sealed),
                                 headers={"Content-Type": "text/plain"})
    assert answer.status_code == 422 and answer.json()["code"] == "request.invalid"


@SQLITE_ONLY
async def test_after_logout_the_cookie_decodes_nothing(operator):
    sealed = await _sealed(operator)
    cookie = operator.cookies.get(SESSION_COOKIE)
    page = await operator.get("/jobs")
    await operator.post("/logout", data={"csrf_token": csrf_of(page.text)})
    operator.cookies.set(SESSION_COOKIE, cookie)
    answer = await operator.post(f"{PREFIX}/decode", json=sealed)
    assert answer.status_code == 401
