"""Sign-in links leave on the notification webhook, signed; never unsigned or logged outside
Development; a failed post is counted and never raised."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

import httpx

from activities.pickup import metrics
from activities.pickup.sign_in_sender import SignInMessage, SignInSender, page_base_url
from services.webhook_gateway.signature import StandardWebhooksV1
from shared.settings import Settings
from tests.support.guardian_inbox import SECRET

URL = "https://push.example/hooks"
LINK = "https://escola.example/guardian/link?token=secret-token"
MESSAGE = SignInMessage(guardian_id=7, link_id=3, link=LINK, minutes=15,
                        expires_at=datetime(2026, 12, 3, 19, 45, tzinfo=UTC))


def _counted(outcome: str) -> float:
    return metrics.NOTIFICATION_ATTEMPTS.labels("sign-in-link", outcome)._value.get()


async def _send(settings: Settings, status: int = 204) -> list[httpx.Request]:
    seen: list[httpx.Request] = []

    def receiver(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status)

    sender = SignInSender(settings, lambda: httpx.AsyncClient(
        transport=httpx.MockTransport(receiver)))
    await sender.send_all([MESSAGE])
    return seen


async def test_the_link_is_posted_signed_like_every_notification(tmp_path):
    settings = Settings(data_dir=tmp_path, environment="Production", pickup={
        "notification_webhook_url": URL, "notification_webhook_secret": SECRET})
    before = _counted("sent")
    [request] = await _send(settings)
    assert StandardWebhooksV1([SECRET]).verify(dict(request.headers), request.content).valid
    assert request.headers["idempotency-key"] == request.headers["webhook-id"] \
        == "sign-in-link:3"
    body = json.loads(request.content)
    assert (body["kind"], body["student_id"], body["link"]) == ("sign-in-link", None, LINK)
    assert LINK in body["message"] and body["expires_at"] == "2026-12-03T19:45:00+00:00"
    assert _counted("sent") == before + 1


async def test_outside_development_nothing_unsigned_and_nothing_logged(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="esteira.pickup.sign_in")
    before = _counted("failed")
    unsigned = Settings(data_dir=tmp_path, environment="Production",
                        pickup={"notification_webhook_url": URL})
    assert await _send(unsigned) == []
    nowhere = Settings(data_dir=tmp_path, environment="Production")
    assert await _send(nowhere) == []
    assert _counted("failed") == before + 2
    assert "secret-token" not in caplog.text
    # Development without a webhook: the link is in the log, for whoever runs `esteira dev`.
    await _send(Settings(data_dir=tmp_path))
    assert "secret-token" in caplog.text


async def test_a_refused_post_is_counted_not_raised(tmp_path):
    settings = Settings(data_dir=tmp_path, pickup={"notification_webhook_url": URL,
                                                   "notification_webhook_secret": SECRET})
    before = _counted("failed")
    assert len(await _send(settings, status=503)) == 1
    assert _counted("failed") == before + 1


def test_the_page_address_is_configured_never_taken_from_a_request(tmp_path):
    assert page_base_url(Settings(data_dir=tmp_path, host="10.0.0.5")) == "http://10.0.0.5:8080"
    assert page_base_url(Settings(data_dir=tmp_path, notifications={
        "public_url": "https://ops.example/"})) == "https://ops.example"
    assert page_base_url(Settings(data_dir=tmp_path, pickup={
        "guardian_page_url": "https://escola.example/"},
        notifications={"public_url": "https://ops.example"})) == "https://escola.example"
