"""A catalogue policy at boot: its document checked by the worker, DEGRADED with the reason
on /api/ready and in the banner, the effective policy (or `none`) in the banner and the API."""

from __future__ import annotations

import logging

import httpx

from activities.signer.contracts.jobs import SignatureFormat
from activities.signer.crypto.policy_catalogue import catalogue_policy
from activities.signer.health_reporter import ProfileHealthReporter
from services.app import create_app
from services.banner_signer import signer_rows_and_panel
from tests.api.conftest import API_KEY, make_context
from tests.support.policy_documents import write_policy
from tests.support.profiles import update_default_profile

AUTH = {"X-API-Key": API_KEY}


async def _boot(context) -> tuple[dict, str, dict]:
    """A worker boots (opens keys, reads policy documents); then readiness, banner, API."""
    await ProfileHealthReporter(context.settings, context.sessions, "worker").report_once()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(context)),
                                 base_url="http://esteira") as api:
        ready = await api.get("/api/ready/details", headers=AUTH)
        profiles = await api.get("/api/profiles", headers=AUTH)
    assert ready.status_code == 200, "a degraded profile never fails readiness"
    check = next(c for c in ready.json()["checks"] if c["name"] == "signing-profile:default")
    rows, panel = await signer_rows_and_panel(context.faces.signer)
    [default] = [p for p in profiles.json()["items"] if p["name"] == "default"]
    return check, render_rows(rows) + "\n" + panel, default


def render_rows(rows: list[tuple[str, str]]) -> str:
    return "\n".join(f"{key} = {value}" for key, value in rows)


async def test_without_a_policy_the_banner_says_none(settings, temporal_env):
    context = await make_context(settings, temporal_env)
    check, banner, profile = await _boot(context)
    assert check["ok"] is True
    assert "signing policy = default: none" in banner
    assert "policy=none" in banner and "AD-RB" not in banner
    assert profile["effectivePolicy"] == "none" and profile["policyName"] is None


async def test_a_matching_document_is_the_effective_policy_a_missing_or_wrong_one_degrades(
        settings, temporal_env, tmp_path, caplog):
    context = await make_context(settings, temporal_env)
    entry = catalogue_policy("AD-RB", SignatureFormat.CADES)
    path, digest, _ = write_policy(tmp_path, entry)
    await update_default_profile(context, format="cades", policy_name="AD-RB",
                                 policy_document=str(path), policy_digest=digest)
    check, banner, profile = await _boot(context)
    described = "ICP-Brasil AD-RB v2.4 CAdES (2.16.76.1.7.1.1.2.4)"
    assert check["ok"] is True, check
    assert f"signing policy = default: {described}" in banner
    assert (profile["effectivePolicy"], profile["policyName"], profile["policyDigest"]) == (
        described, "AD-RB", digest)

    await update_default_profile(context, policy_digest="0" * 64)
    with caplog.at_level(logging.CRITICAL, logger="esteira.banner"):
        check, banner, _ = await _boot(context)
    assert check["ok"] is False and "does not match PolicyDigest" in check["detail"]
    assert any(line.startswith("default") and "DEGRADED ·" in line
               for line in banner.splitlines())
    assert any("FAIL signing profile default" in r.getMessage()
               and "does not match PolicyDigest" in r.getMessage() for r in caplog.records)

    await update_default_profile(context, policy_digest=digest)
    path.unlink()
    check, _, _ = await _boot(context)
    assert check["ok"] is False
    assert check["detail"] == (f"DEGRADED: policy document {path} cannot be read "
                               "(No such file or directory)")


async def test_the_api_names_a_catalogue_policy_as_policy_and_refuses_an_unknown_one(
        settings, temporal_env):
    context = await make_context(settings, temporal_env)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(context)),
                                 base_url="http://esteira") as api:
        named = await api.patch("/api/profiles/default", headers=AUTH, json={
            "format": "pades", "policy": "AD-RB", "policy_document": "/srv/PA_PAdES_AD_RB_v1_3.der",
            "policy_digest": "cd" * 32})
        unknown = await api.patch("/api/profiles/default", headers=AUTH,
                                  json={"policy": "AD-RZ"})
    assert named.status_code == 200, named.text
    assert (named.json()["policyName"], named.json()["effectivePolicy"]) == (
        "AD-RB", "ICP-Brasil AD-RB v1.3 PAdES (2.16.76.1.7.1.11.1.3)")
    assert (unknown.status_code, unknown.json()["code"]) == (422, "profile.invalid")
