"""PKCS#11 modules come only from deployment configuration; the API never loads one."""

from __future__ import annotations

from unittest import mock

import httpx
import pytest

from activities.signer.models.jobs import SigningProfile
from services.app import create_app
from tests.api.conftest import API_KEY, make_context
from tests.dashboard.conftest import sign_in

AUTH = {"X-API-Key": API_KEY}
PIN_ENV = "ESTEIRA_TEST_ALLOW_LIST_PIN"


def _token_profile(module: str, name: str = "token") -> dict:
    return {"name": name, "cert_source": "pkcs11", "pkcs11_module": module,
            "pkcs11_thumbprint": "AB" * 20, "pkcs11_pin_env": PIN_ENV}


async def test_a_module_outside_the_allow_list_is_refused_with_its_code(settings, temporal_env,
                                                                         tmp_path):
    uploaded = tmp_path / "storage" / "uploads" / "x.pdf"  # a .so dressed as an upload
    allowed = "/usr/lib/softhsm/libsofthsm2.so"
    settings.signing.pkcs11_modules = [allowed]
    context = await make_context(settings, temporal_env)
    async with _client(context) as api:
        refused = await api.post("/api/profiles", headers=AUTH,
                                 json=_token_profile(str(uploaded)))
        listed = await api.post("/api/profiles", headers=AUTH,
                                json=_token_profile(allowed, "hsm"))
        profiles = {p["name"]
                    for p in (await api.get("/api/profiles", headers=AUTH)).json()["items"]}
    assert refused.status_code == 422
    assert refused.json()["code"] == "profile.pkcs11-module-not-allowed"
    assert "ESTEIRA_SIGNING__PKCS11_MODULES" in refused.json()["message"]
    assert listed.status_code == 201, listed.text
    assert "token" not in profiles and "hsm" in profiles
    await context.engine.dispose()


async def test_enabling_a_stored_profile_with_an_unlisted_module_is_refused(settings,
                                                                         temporal_env):
    context = await make_context(settings, temporal_env)
    async with context.sessions() as session:
        session.add(SigningProfile(**_token_profile("/tmp/evil.so"), enabled=False))
        await session.commit()
    async with _client(context) as api:
        enable = await api.patch("/api/profiles/token", headers=AUTH, json={"enabled": True})
    assert (enable.status_code, enable.json()["code"]) == (
        422, "profile.pkcs11-module-not-allowed")
    await context.engine.dispose()


@pytest.mark.parametrize("path", ["/api/ready", "/api/ready/details", "/profiles"])
async def test_readiness_and_the_dashboard_never_load_a_module(settings, temporal_env,
                                                               monkeypatch, path):
    # A row written before the allow-list existed, naming a module that is even listed:
    # still only a worker may load it, never a request handler of the API.
    monkeypatch.setenv(PIN_ENV, "1234")
    settings.signing.pkcs11_modules = ["/tmp/evil.so"]
    context = await make_context(settings, temporal_env)
    async with context.sessions() as session:
        session.add(SigningProfile(**_token_profile("/tmp/evil.so")))
        await session.commit()
    with mock.patch("activities.signer.crypto.pkcs11_token.load_pkcs11_signer") as loader:
        async with _client(context) as api:
            if path == "/profiles":
                assert (await sign_in(api)).status_code == 303
            response = await api.get(path, headers=AUTH)
    assert response.status_code == 200, response.text
    loader.assert_not_called()
    if path == "/api/ready/details":
        token = next(c for c in response.json()["checks"]
                     if c["name"] == "signing-profile:token")
        assert token["ok"] is False and "no worker has opened" in token["detail"]
    await context.engine.dispose()


def _client(context) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=create_app(context))
    return httpx.AsyncClient(transport=transport, base_url="http://esteira")
