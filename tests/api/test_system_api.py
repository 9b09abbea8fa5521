"""Health, readiness, metrics and the API key, against a real store and Temporal."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import httpx
from temporalio.client import Client

from activities.signer.health_reporter import ProfileHealthReporter
from activities.signer.models.jobs import InputFolderState, SigningProfile
from services.app import create_app
from shared.db.engine import create_engine, session_factory
from shared.readiness import Probe
from shared.settings import Settings
from shared.temporal import TemporalHandle
from tests.api.conftest import API_KEY, make_context

AUTH = {"X-API-Key": API_KEY}


async def test_health_answers_without_a_key(api):
    response = await api.get("/api/health")
    assert response.status_code == 200
    assert response.json()["status"] == "Healthy"


async def test_ready_lists_each_check_by_name_without_detail(api):
    response = await api.get("/api/ready")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "Ready"
    assert body["checks"] == [{"name": "operational-store", "ok": True},
                              {"name": "temporal", "ok": True},
                              {"name": "input-folder:inbox", "ok": True},
                              # No watcher runs here (Readiness:Processes = []): the truth,
                              # without failing the verdict.
                              {"name": "folder-watcher:inbox", "ok": False},
                              {"name": "signing-profile:default", "ok": True},
                              {"name": "profile-input-folder:default", "ok": True}]


async def test_ready_details_needs_the_key_and_gives_detail(api):
    refused = await api.get("/api/ready/details")
    assert refused.status_code == 401
    assert refused.json()["code"] == "auth.missing-key"
    response = await api.get("/api/ready/details", headers=AUTH)
    assert response.status_code == 200
    checks = {c["name"]: c for c in response.json()["checks"]}
    assert checks["temporal"]["detail"]
    assert checks["operational-store"]["gating"] is True


async def test_wrong_key_is_refused_with_a_json_error(api):
    response = await api.get("/api/ready/details", headers={"X-API-Key": "nope"})
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json() == {"type": "about:blank", "title": "Unauthorized", "status": 401,
                               "detail": "The API key is not valid.", "code": "auth.invalid-key",
                               "message": "The API key is not valid."}


async def test_unknown_api_paths_are_closed_before_they_exist(api):
    # Default-deny: a route added later without thinking about auth is still protected.
    assert (await api.post("/api/not-built-yet")).status_code == 401
    assert (await api.post("/api/not-built-yet", headers=AUTH)).status_code == 404


async def test_key_comparison_is_constant_time(api):
    with mock.patch("shared.auth.hmac.compare_digest", return_value=True) as compare:
        response = await api.get("/api/ready/details", headers={"X-API-Key": "anything"})
    assert response.status_code == 200
    compare.assert_called_once_with(b"anything", API_KEY.encode())


async def test_store_down_fails_readiness(settings, temporal_env):
    context = await make_context(settings, temporal_env)
    await context.engine.dispose()
    context.engine = create_engine("postgresql+asyncpg://nobody@127.0.0.1:1/none")
    context.sessions = session_factory(context.engine)
    async with _client(context) as api:
        response = await api.get("/api/ready")
    assert response.status_code == 503
    assert {"name": "operational-store", "ok": False} in response.json()["checks"]


async def test_temporal_down_fails_readiness(settings, temporal_env):
    context = await make_context(settings, temporal_env)

    async def unreachable():
        return await Client.connect("127.0.0.1:1")

    context.temporal = TemporalHandle(unreachable)
    async with _client(context) as api:
        response = await api.get("/api/ready/details", headers=AUTH)
    assert response.status_code == 503
    temporal = next(c for c in response.json()["checks"] if c["name"] == "temporal")
    assert temporal["ok"] is False and temporal["detail"]


async def test_missing_assigned_folder_fails_readiness_by_name(settings, temporal_env):
    context = await make_context(settings, temporal_env)
    inbox = settings.storage_root / "input" / "inbox"
    async with _client(context) as api:
        inbox.rmdir()
        missing = await api.get("/api/ready")
        inbox.mkdir()
        present = await api.get("/api/ready")
    assert missing.status_code == 503
    assert {"name": "input-folder:inbox", "ok": False} in missing.json()["checks"]
    assert present.status_code == 200


async def test_unassigned_folder_is_green_even_if_missing(settings, temporal_env, tmp_path):
    settings = Settings(data_dir=settings.data_dir, database_url=settings.database_url,
                        storage={"inputs": [{"name": "inbox"},
                                            {"name": "spare", "path": tmp_path / "nowhere"}]})
    context = await make_context(settings, temporal_env)
    async with _client(context) as api:
        response = await api.get("/api/ready")
    assert response.status_code == 200
    assert {"name": "input-folder:spare", "ok": True} in response.json()["checks"]


async def test_stopped_watcher_fails_its_folder_check(settings, temporal_env):
    context = await make_context(settings, temporal_env)
    async with context.sessions() as session:
        session.add(InputFolderState(name="inbox", status="Stopped",
                                     last_error="10 consecutive failures"))
        await session.commit()
    async with _client(context) as api:
        response = await api.get("/api/ready/details", headers=AUTH)
    assert response.status_code == 503
    inbox = next(c for c in response.json()["checks"] if c["name"] == "input-folder:inbox")
    assert inbox["ok"] is False and "10 consecutive failures" in inbox["detail"]


async def test_degraded_profile_is_shown_but_does_not_fail_readiness(settings, temporal_env):
    context = await make_context(settings, temporal_env)
    async with context.sessions() as session:
        profile = await session.get(SigningProfile, "default")
        Path(profile.pfx_password_file).write_text("wrong password")
    # A worker opens the key and records the verdict; the API only shows it.
    await ProfileHealthReporter(settings, context.sessions, "worker-2").report_once()
    async with _client(context) as api:
        response = await api.get("/api/ready/details", headers=AUTH)
    assert response.status_code == 200
    check = next(c for c in response.json()["checks"]
                 if c["name"] == "signing-profile:default")
    assert check["ok"] is False and check["gating"] is False
    assert "DEGRADED" in check["detail"]


async def test_non_gating_check_is_shown_but_does_not_fail_readiness(settings, temporal_env):
    context = await make_context(settings, temporal_env)

    async def degraded():
        return False, "certificate could not be opened"

    context.extra_probes.append(Probe("custom:thing", degraded, gating=False))
    async with _client(context) as api:
        response = await api.get("/api/ready")
    assert response.status_code == 200
    assert {"name": "custom:thing", "ok": False} in response.json()["checks"]


async def test_metrics_expose_ours_and_the_temporal_sdks(api, temporal_env):
    from shared.metrics import TemporalMetricsBridge
    from shared.temporal import connect

    bridge = TemporalMetricsBridge()
    settings = api.context.settings.model_copy()
    settings.temporal.address = temporal_env.client.service_client.config.target_host
    client = await connect(settings, runtime=bridge.runtime)
    await client.service_client.check_health()
    await client.count_workflows()
    assert bridge.drain() > 0
    response = await api.get("/api/metrics")
    assert response.status_code == 200
    assert "text/plain" in response.headers["content-type"]
    assert "temporal_request" in response.text
    assert "process_" in response.text or "python_info" in response.text


def _client(context):
    transport = httpx.ASGITransport(app=create_app(context))
    return httpx.AsyncClient(transport=transport, base_url="http://esteira")

