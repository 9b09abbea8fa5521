"""A KEYLESS profile at boot: nothing opened, never DEGRADED, its own readiness line."""

from __future__ import annotations

import logging

import httpx
import pytest

import activities.signer.health as profile_checks
from activities.signer.profiles import parse_profiles
from services.app import create_app
from services.banner_signer import signer_rows_and_panel
from shared.settings import ConfigurationError, Settings
from tests.api.conftest import API_KEY, make_context
from tests.support.lacuna import KEYLESS_APPROVERS

AUTH = {"X-API-Key": API_KEY}
KEYLESS = {"name": "aprovadores", "signers": "Approvers",
           "approval": {"approvers": KEYLESS_APPROVERS, "quorum": 2}}


@pytest.fixture
def settings(settings, tmp_path):
    """Production, with only a KEYLESS profile configured (no certificate anywhere)."""
    return Settings(environment="Production", data_dir=tmp_path / "prod",
                    database_url=settings.database_url, api_key=API_KEY,
                    signing={"profiles": [KEYLESS]})


async def test_a_keyless_profile_opens_nothing_and_reads_ready(settings, temporal_env,
                                                               monkeypatch, caplog):
    def no_key(_spec):
        raise AssertionError("a KEYLESS profile has no key to open")

    monkeypatch.setattr(profile_checks, "open_certificate", no_key)
    with caplog.at_level(logging.WARNING):
        context = await make_context(settings, temporal_env)  # a worker's check runs here
        rows, panel = await signer_rows_and_panel(context.faces.signer)
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as api:
        ready = await api.get("/api/ready")
        details = await api.get("/api/ready/details", headers=AUTH)
        shown = await api.get("/api/profiles/aprovadores", headers=AUTH)
        unknown = await api.get("/api/profiles/nenhum", headers=AUTH)
    await context.engine.dispose()
    assert {"name": "signing-profile-keyless:aprovadores", "ok": True} in ready.json()["checks"]
    assert not [c for c in ready.json()["checks"] if c["name"].startswith("signing-profile:")]
    assert ready.status_code == 200, ready.json()
    [line] = [c for c in details.json()["checks"]
              if c["name"] == "signing-profile-keyless:aprovadores"]
    assert line["detail"] == "cert=none (approvers sign)"
    [row] = [r for r in panel.splitlines() if "aprovadores" in r]
    assert "KEYLESS · cert=none (approvers sign)" in row and "DEGRADED" not in row
    assert dict(rows)["signing"] == "ready"
    assert not [r for r in caplog.records if "FAIL signing profile" in r.getMessage()]
    assert not (settings.data_dir / "pki").exists()
    body = shown.json()
    assert (shown.status_code, body["keyless"], body["signers"], body["certSource"],
            body["method"]) == (200, True, "Approvers", "none", "LacunaSigner")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "profile.not-found")
    assert [a["cpf"] for a in body["approval"]["approvers"]] == [
        a["cpf"] for a in KEYLESS_APPROVERS]


@pytest.mark.parametrize(("entry", "problem"), [
    ({**KEYLESS, "approval": {"approvers": [{"name": "Ana", "email": "a@x.com"}]}},
     "have a cpf"),
    ({"name": "x", "signers": "Approvers"}, "needs an approval block"),
    ({**KEYLESS, "pfx_path": "/srv/a.pfx"}, "holds no key"),
])
def test_a_keyless_profile_needs_cpfs_and_no_key(entry, problem):
    with pytest.raises(ConfigurationError) as refused:
        parse_profiles([entry])
    assert problem in str(refused.value)


def test_cert_source_none_is_only_for_approvers():
    with pytest.raises(ConfigurationError) as refused:
        parse_profiles([{"name": "x", "cert_source": "none"}])
    assert "only for signers Approvers" in str(refused.value)
