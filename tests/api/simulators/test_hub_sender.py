"""Streaming Hub sender: notices it signs verify under Standard Webhooks v1."""

from __future__ import annotations

import base64
import json

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from services.simulators.hub import asend_notice, prepare_notice, send_notice
from services.simulators.hub.notice import NOTICE_TYPE
from services.webhook_gateway.signature import StandardWebhooksV1

SECRET = "whsec_" + base64.b64encode(b"hub secret, twenty-four+").decode()
NEW = "whsec_" + base64.b64encode(b"rotated secret, 24 bytes").decode()


def _receiver(*secrets: str) -> tuple[FastAPI, list[dict]]:
    """A stand-in gateway that verifies and records each delivery."""
    app = FastAPI()
    seen: list[dict] = []
    scheme = StandardWebhooksV1(list(secrets))

    @app.post("/hook")
    async def hook(request: Request) -> JSONResponse:
        body = await request.body()
        verdict = scheme.verify(request.headers, body)
        seen.append({"verdict": verdict, "body": json.loads(body), "headers": request.headers})
        return JSONResponse({}, status_code=200 if verdict.valid else 401)

    return app, seen


@pytest.mark.asyncio
async def test_notice_carries_order_id_and_revision_and_verifies():
    app, seen = _receiver(SECRET)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://gw"
    ) as http:
        response = await asend_notice("/hook", SECRET, "order-1", 3, client=http)
    assert response.status_code == 200
    (delivery,) = seen
    assert delivery["verdict"].valid
    assert delivery["body"]["type"] == NOTICE_TYPE
    assert delivery["body"]["data"] == {"orderId": "order-1", "revision": 3}
    assert delivery["headers"]["webhook-id"].startswith("msg_")


@pytest.mark.asyncio
async def test_signing_with_old_and_new_secret_verifies_against_the_new_one():
    app, seen = _receiver(NEW)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://gw"
    ) as http:
        response = await asend_notice("/hook", [SECRET, NEW], "order-1", 3, client=http)
        refused = await asend_notice("/hook", SECRET, "order-1", 3, client=http)
    assert response.status_code == 200 and refused.status_code == 401
    assert len(seen[0]["headers"]["webhook-signature"].split()) == 2


@pytest.mark.asyncio
async def test_skewed_timestamp_is_still_signed_correctly_and_flagged():
    app, seen = _receiver(SECRET)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://gw"
    ) as http:
        await asend_notice("/hook", SECRET, "order-1", 3, client=http, skew_s=-3600)
    assert seen[0]["verdict"].valid and seen[0]["verdict"].skewed


def test_stable_message_id_and_raw_body_override():
    notice = prepare_notice(
        SECRET, "o", 1, msg_id="msg_fixed", timestamp=1_700_000_000, body=b"not json"
    )
    assert notice.body == b"not json"
    assert notice.headers["webhook-id"] == "msg_fixed"
    verdict = StandardWebhooksV1([SECRET], clock=lambda: 1_700_000_000).verify(
        notice.headers, notice.body
    )
    assert verdict.valid


def test_blocking_sender_posts_the_signed_body():
    captured: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        captured.append(request)
        return httpx.Response(200)

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        response = send_notice("http://gw/hook", SECRET, "order-2", 1, client=http)
    assert response.status_code == 200
    request = captured[0]
    assert StandardWebhooksV1([SECRET]).verify(request.headers, request.content).valid
