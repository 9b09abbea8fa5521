"""The HTTP access log: one line per request, tokens in paths and query strings masked."""

from __future__ import annotations

import logging

import httpx
import pytest

from services.app import create_app
from shared.http_observability import observe_http
from shared.settings import Settings
from tests.api.conftest import API_KEY, make_context

TOKEN = "s3cret-Tok3n-value"


@pytest.fixture
def backend() -> str:
    """The log doesn't depend on the store's engine."""
    return "sqlite"


@pytest.fixture
async def logged_api(settings, temporal_env):
    settings.logging.access_log = True
    context = await make_context(settings, temporal_env)
    app = create_app(context)
    observe_http(app, settings, service="api")
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 51000))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as client:
        yield client
    await context.engine.dispose()


def lines(caplog) -> list[dict]:
    return [record.props for record in caplog.records if record.name == "esteira.access"]


async def test_every_request_is_logged_with_status_duration_and_client(logged_api, caplog):
    caplog.set_level(logging.INFO, logger="esteira.access")
    await logged_api.get("/api/health")
    await logged_api.get("/api/jobs")  # no key: refused, still logged
    await logged_api.get("/api/jobs", params={"status": "Failed"}, headers={"X-API-Key": API_KEY})
    await logged_api.get("/login")
    logged = lines(caplog)
    assert [(e["RequestMethod"], e["RequestPath"], e["StatusCode"]) for e in logged] == [
        ("GET", "/api/health", 200), ("GET", "/api/jobs", 401),
        ("GET", "/api/jobs?status=Failed", 200), ("GET", "/login", 200)]
    assert all(e["Client"] == "203.0.113.7" and e["Service"] == "api" for e in logged)
    assert all(isinstance(e["ElapsedMs"], float) and e["ElapsedMs"] >= 0 for e in logged)
    [record] = [r for r in caplog.records if r.name == "esteira.access"][:1]
    assert record.getMessage().startswith("HTTP GET /api/health responded 200 in ")


async def test_tokens_in_paths_and_query_strings_are_masked(logged_api, caplog):
    caplog.set_level(logging.INFO, logger="esteira.access")
    await logged_api.post(f"/api/signer/lacuna/webhook/{TOKEN}", json={})
    await logged_api.post(f"/api/pickup/turnstile/monitor/1/{TOKEN}/dao", json={})
    await logged_api.get("/api/jobs", params={"access_token": TOKEN, "api_key": TOKEN,
                                              "page": "2"})
    # An id named like a token is not a secret.
    await logged_api.post("/api/pickup/guardians/4/tokens/9/revoke")
    paths = [e["RequestPath"] for e in lines(caplog)]
    assert paths == ["/api/signer/lacuna/webhook/***", "/api/pickup/turnstile/monitor/1/***/dao",
                     "/api/jobs?access_token=***&api_key=***&page=2",
                     "/api/pickup/guardians/4/tokens/9/revoke"]
    assert TOKEN not in caplog.text


def test_on_by_default_outside_development_and_settable_either_way():
    assert Settings(environment="Production").access_log is True
    assert Settings(environment="Development").access_log is False
    assert Settings(environment="Development", logging={"access_log": True}).access_log is True
    assert Settings(environment="Production", logging={"access_log": False}).access_log is False
