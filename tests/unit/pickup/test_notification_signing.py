"""Outbound guardian notifications carry a Standard Webhooks v1 signature receivers can check."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime

import httpx
import pytest
from standardwebhooks import Webhook

from activities.pickup.models import Notification
from activities.pickup.notifications import WebhookSender
from activities.pickup.worker import _sender
from services.webhook_gateway.signature import StandardWebhooksV1, VerdictCode
from shared.settings import ConfigurationError, Settings

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
NOW = datetime(2026, 12, 3, 19, 30, tzinfo=UTC)
URL = "https://push.example/hooks"


def _notification() -> Notification:
    return Notification(id=1, guardian_id=7, student_id=9, kind="arrived",
                        message="Ana chegou.", idempotency_key="notif-1", status="pending")


async def _sent(secret: str | None, now: datetime = NOW) -> httpx.Request:
    seen: list[httpx.Request] = []

    def receiver(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(204)

    async with httpx.AsyncClient(transport=httpx.MockTransport(receiver)) as http:
        await WebhookSender(http, URL, secret, clock=lambda: now).send(_notification())
    [request] = seen
    return request


async def test_a_delivery_verifies_with_the_library_and_with_our_own_verifier():
    now = datetime.now(UTC)  # the library checks the timestamp against the real clock
    request = await _sent(SECRET, now)
    headers = dict(request.headers)
    assert headers["webhook-id"] == headers["idempotency-key"] == "notif-1"
    assert headers["webhook-timestamp"] == str(int(now.timestamp()))
    assert headers["webhook-signature"].startswith("v1,")
    body = request.content
    assert json.loads(body) == {"guardian_id": 7, "student_id": 9, "kind": "arrived",
                                "message": "Ana chegou."}
    assert Webhook(SECRET).verify(body, headers) == json.loads(body)
    verdict = StandardWebhooksV1([SECRET]).verify(headers, body)  # our inbound verifier
    assert verdict.valid and verdict.code == VerdictCode.OK


async def test_a_tampered_body_or_another_secret_fails_verification():
    request = await _sent(SECRET)
    headers = dict(request.headers)
    verifier = StandardWebhooksV1([SECRET], clock=NOW.timestamp)
    assert not verifier.verify(headers, request.content.replace(b"Ana", b"Eva")).valid
    other = "whsec_" + base64.b64encode(b"o" * 32).decode()
    assert not StandardWebhooksV1([other], clock=NOW.timestamp).verify(
        headers, request.content).valid


async def test_without_a_secret_nothing_claims_a_signature():
    request = await _sent(None)
    assert "webhook-signature" not in request.headers
    assert request.headers["idempotency-key"] == "notif-1"


def test_production_refuses_an_unsigned_webhook(tmp_path):
    settings = Settings(data_dir=tmp_path, environment="Production",
                        pickup={"notification_webhook_url": URL})
    with pytest.raises(ConfigurationError, match="NOTIFICATION_WEBHOOK_SECRET"):
        _sender(settings, http=None)
    signed = Settings(data_dir=tmp_path, environment="Production",
                      pickup={"notification_webhook_url": URL,
                              "notification_webhook_secret": SECRET})
    assert isinstance(_sender(signed, http=None), WebhookSender)
