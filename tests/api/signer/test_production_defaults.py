"""Production with no configured profile: nothing generated, nothing signed, not ready."""

from __future__ import annotations

import httpx
import pytest

from services.app import create_app
from services.banner_signer import signer_rows_and_panel
from shared.settings import Settings
from tests.api.conftest import API_KEY, make_context

AUTH = {"X-API-Key": API_KEY}


@pytest.fixture
def settings(settings, tmp_path):
    return Settings(environment="Production", data_dir=tmp_path / "prod",
                    database_url=settings.database_url, api_key=API_KEY)


async def test_no_profile_is_reported_not_ready_and_signs_nothing(settings, temporal_env):
    context = await make_context(settings, temporal_env)
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as api:
        ready = await api.get("/api/ready")
        upload = await api.post("/api/files", headers=AUTH,
                                files={"file": ("a.pdf", b"%PDF-1.7\n", "application/pdf")})
        jobs = await api.get("/api/jobs", headers=AUTH)
    assert ready.status_code == 503
    assert {"name": "signing-profile:none", "ok": False} in ready.json()["checks"]
    assert (upload.status_code, upload.json()["code"]) == (404, "profile.not-found")
    assert jobs.json()["items"] == []
    assert not (settings.data_dir / "pki").exists()
    rows, panel = await signer_rows_and_panel(context.faces.signer)
    assert dict(rows)["signing"].startswith("NOT READY (signing-profile:none)")
    assert "(none)" in panel
    await context.engine.dispose()
