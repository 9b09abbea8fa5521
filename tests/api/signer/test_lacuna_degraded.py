"""SignerFolder / LacunaSigner DEGRADED reasons on /api/ready and in the banner; the webhook."""

from __future__ import annotations

import logging

import httpx
import pytest

from activities.signer.health_reporter import ProfileHealthReporter
from activities.signer.lacuna.client import LacunaClient
from activities.signer.lacuna.discovery import SignerFolderScanner
from activities.signer.models.jobs import SigningProfile
from services.app import create_app
from services.banner_signer import signer_rows_and_panel
from services.simulators.lacuna import LacunaSimSettings
from services.simulators.lacuna import create_app as sim_app
from shared.settings import SignerSettings
from tests.api.conftest import API_KEY, make_context
from tests.support.lacuna import SIM_KEY, remote_profile, write_holder_pki
from tests.support.sisbajud import serve

AUTH = {"X-API-Key": API_KEY}


@pytest.fixture(scope="module")
def holder_pki(tmp_path_factory):
    return write_holder_pki(tmp_path_factory.mktemp("holder"))


async def _add(context, name: str, holder_pki=None, **fields) -> None:
    async with context.sessions() as session:
        base = await session.get(SigningProfile, "default")
        if holder_pki is not None:
            fields |= {"pfx_path": str(holder_pki.pfx),
                       "pfx_password_file": str(holder_pki.password_file),
                       "trust_roots": [str(holder_pki.ca_pem)]}
        session.add(remote_profile(base, name, **fields))
        await session.commit()


async def _worker_checks(context) -> None:
    """What a worker does: open each enabled profile's key and record the verdict."""
    await ProfileHealthReporter(context.settings, context.sessions, "worker").report_once()


async def _check(context, name: str) -> dict:
    await _worker_checks(context)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(context)),
                                 base_url="http://esteira") as api:
        response = await api.get("/api/ready/details", headers=AUTH)
    assert response.status_code == 200  # a degraded profile never fails readiness
    return next(c for c in response.json()["checks"] if c["name"] == f"signing-profile:{name}")


async def _panel(context, settings) -> str:
    await _worker_checks(context)
    _, panel = await signer_rows_and_panel(context.faces.signer)
    return panel


def _configure(settings, url: str = "http://127.0.0.1:9") -> None:
    settings.signer = SignerSettings(url=url, api_key=SIM_KEY, webhook_token="tok-0123456789")


async def test_a_certificate_without_cpf_degrades_a_signer_folder_profile(
        settings, temporal_env, caplog):
    _configure(settings)
    context = await make_context(settings, temporal_env)
    await _add(context, "nocpf", method="SignerFolder", signer_folder_id="f")
    check = await _check(context, "nocpf")
    assert check["ok"] is False and "carries no CPF" in check["detail"]
    with caplog.at_level(logging.CRITICAL, logger="esteira.banner"):
        panel = await _panel(context, settings)
    assert any("nocpf" in line and "DEGRADED ·" in line for line in panel.splitlines())
    assert any("FAIL signing profile nocpf" in r.getMessage() and "no CPF" in r.getMessage()
               for r in caplog.records)
    await context.engine.dispose()


@pytest.mark.parametrize("method", ["SignerFolder", "LacunaSigner"])
async def test_missing_signer_settings_degrade_the_remote_methods(
        settings, temporal_env, holder_pki, method):
    context = await make_context(settings, temporal_env)
    await _add(context, "remote", holder_pki, method=method, signer_folder_id="f",
               signer_flow=[{"type": "Signer", "step": 1, "user": {"identifier": "1"}}])
    check = await _check(context, "remote")
    assert check["ok"] is False and "Signer:*" in check["detail"]
    panel = await _panel(context, settings)
    assert any("remote" in line and "DEGRADED ·" in line for line in panel.splitlines())
    assert (await _check(context, "default"))["ok"] is True  # Local profiles don't care
    await context.engine.dispose()


async def test_a_vanished_folder_is_found_by_the_scan_and_fixed_by_rebinding(
        settings, temporal_env, holder_pki):
    sim_settings = LacunaSimSettings(api_key=SIM_KEY, folders="fold-1")
    with serve(sim_app(sim_settings)) as url:
        _configure(settings, url)
        context = await make_context(settings, temporal_env)
        await _add(context, "holder", holder_pki, method="SignerFolder",
                   signer_folder_id="gone")
        assert (await _check(context, "holder"))["ok"] is True  # not known before a scan
        client = LacunaClient.from_settings(settings)
        signer = context.faces.signer
        scanner = SignerFolderScanner(signer.repository, signer.enqueuer, client)
        report = await scanner.scan()
        assert report.errors == ["holder: folder gone not found"]
        check = await _check(context, "holder")
        assert check["ok"] is False and "no longer exists" in check["detail"]
        # Never by the banner: it is the scan's finding, after startup.
        assert "DEGRADED" not in (await _panel(context, settings))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(context)),
                                     base_url="http://esteira") as api:
            rebound = await api.patch("/api/profiles/holder", headers=AUTH,
                                      json={"signer_folder_id": "fold-1"})
        assert rebound.status_code == 200
        assert (await _check(context, "holder"))["ok"] is True  # no restart needed
        await client.http.aclose()
        await context.engine.dispose()


async def test_the_webhook_route_authenticates_by_its_path_token(settings, temporal_env):
    _configure(settings)
    context = await make_context(settings, temporal_env)
    body = {"type": "DocumentConcluded", "data": {"documentId": "unknown"}}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(context)),
                                 base_url="http://esteira") as api:
        wrong = await api.post("/api/signer/lacuna/webhook/not-the-token", json=body)
        right = await api.post("/api/signer/lacuna/webhook/tok-0123456789", json=body)
        malformed = await api.post("/api/signer/lacuna/webhook/tok-0123456789",
                                   json={"type": "DocumentConcluded"})
    assert wrong.status_code == 401 and wrong.json()["code"] == "auth.invalid-key"
    assert right.status_code == 200 and right.json() == {"signaled": 0}
    assert malformed.status_code == 422 and malformed.json()["code"] == "request.invalid"
    await context.engine.dispose()
