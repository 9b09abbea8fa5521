"""A profile's stored folder binding checked against this host's `Storage:Inputs[]`."""

from __future__ import annotations

import logging

import httpx

from activities.signer.models.jobs import SigningProfile
from services.app import create_app
from services.banner_signer import signer_rows_and_panel
from tests.api.conftest import API_KEY, make_context

AUTH = {"X-API-Key": API_KEY}
STALE = ("profile antigo is bound to folder 'remessas', which this host does not configure "
         "(Storage:Inputs[]): nothing is watched for it here and it still serves uploads; "
         "choose another folder on /profiles/antigo")


async def _with_stale_binding(settings, temporal_env):
    context = await make_context(settings, temporal_env)
    async with context.sessions() as session:
        # Bound on an earlier boot; `remessas` was then removed from the configuration.
        session.add(SigningProfile(name="antigo", pfx_path="/x.pfx", input_folder="remessas"))
        await session.commit()
    return context


async def test_readiness_has_a_non_gating_line_per_bound_profile(settings, temporal_env):
    context = await _with_stale_binding(settings, temporal_env)
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as api:
        details = await api.get("/api/ready/details", headers=AUTH)
        ready = await api.get("/api/ready")
    await context.engine.dispose()
    assert (details.status_code, ready.status_code) == (200, 200), "it fails no verdict"
    checks = {c["name"]: c for c in details.json()["checks"]}
    bound = checks["profile-input-folder:default"]
    assert (bound["ok"], bound["gating"]) == (True, False)
    assert bound["detail"] == "folder inbox is configured on this host"
    stale = checks["profile-input-folder:antigo"]
    assert (stale["ok"], stale["gating"], stale["detail"]) == (False, False, STALE)
    assert {"name": "profile-input-folder:antigo", "ok": False} in ready.json()["checks"]


async def test_the_banner_warns_about_a_profile_bound_to_a_folder_not_configured_here(
        settings, temporal_env, caplog):
    context = await _with_stale_binding(settings, temporal_env)
    with caplog.at_level(logging.WARNING, logger="esteira.banner"):
        _, panel = await signer_rows_and_panel(context.faces.signer)
    await context.engine.dispose()
    assert panel.endswith(f"\nWARN {STALE}")
    assert panel.count("WARN profile") == 1, "the profile bound to inbox is fine"
    assert f"WARN {STALE}" in [r.getMessage() for r in caplog.records]
