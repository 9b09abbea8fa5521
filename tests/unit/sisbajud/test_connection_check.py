"""The connection check: each institution's token endpoint and CRM (and the Mensageria's token
endpoint) called once; a 404 names the setting to change."""

from __future__ import annotations

import httpx
import pytest

from activities.sisbajud.connections import check_connections, summary
from activities.sisbajud.operator import SisbajudOperations
from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from services.simulators.oauth import OAuthClient
from shared.settings import InstitutionSettings, Settings, SisbajudSettings
from tests.support.sisbajud import serve

MIDAZ, MENSAGERIA = "http://midaz.test", "http://mensageria.test"
ORG = "0190b000-0000-7000-8000-0000000000a1"
LEDGER = "0190b000-0000-7000-8000-0000000000a2"
CLIENTS = {"exec": OAuthClient("secret", "esteira/exec")}


def _settings(**institution: object) -> Settings:
    fields = {"id": "B", "base_url": MIDAZ, "client_id": "exec", "client_secret": "secret",
              "organization_id": ORG, "ledger_id": LEDGER, **institution}
    return Settings(sisbajud=SisbajudSettings(
        m2m_subject="esteira/exec", mensageria_url=MENSAGERIA, mensageria_client_id="exec",
        mensageria_client_secret="secret",
        institutions=[InstitutionSettings(**fields)]))


@pytest.fixture
async def http():
    """Strict simulators; `http.seen` lists every request the check made."""
    seen: list[str] = []

    async def record(request: httpx.Request) -> None:
        seen.append(f"{request.method} {request.url.copy_with(query=None)}")

    client = httpx.AsyncClient(event_hooks={"request": [record]}, mounts={
        MIDAZ: httpx.ASGITransport(midaz_app(clients=CLIENTS)),
        MENSAGERIA: httpx.ASGITransport(mensageria_app(clients=CLIENTS))})
    client.seen = seen
    yield client
    await client.aclose()


async def test_every_endpoint_is_called_once_and_answers(http):
    found = await check_connections(http, _settings())
    assert [(c.target, c.ok) for c in found] == [
        ("B token", True), ("B subject", True), ("B crm", True), ("Mensageria token", True)]
    assert sorted(http.seen) == sorted([
        f"POST {MIDAZ}/v1/login/oauth/access_token",
        f"GET {MIDAZ}/v1/organizations/{ORG}/instruments",
        f"POST {MENSAGERIA}/v1/login/oauth/access_token"])
    assert summary(found) == (True, "4 endpoint(s) answered")


async def test_a_crm_route_midaz_does_not_serve_names_crm_embedded_version(http):
    found = await check_connections(http, _settings(crm_embedded_version="v2"))
    crm = next(c for c in found if c.target == "B crm")
    assert not crm.ok and crm.url == f"{MIDAZ}/v2/organizations/{ORG}/instruments"
    assert crm.detail.startswith("404")
    assert "ESTEIRA_SISBAJUD__INSTITUTIONS[B].crm_embedded_version" in crm.detail
    ok, detail = summary(found)
    assert not ok and "B crm" in detail


async def test_a_legacy_crm_that_is_not_there_names_crm_base_url(http):
    found = await check_connections(http, _settings(crm_mode="legacy",
                                                    crm_base_url=f"{MIDAZ}/nowhere"))
    crm = next(c for c in found if c.target == "B crm")
    assert not crm.ok and "ESTEIRA_SISBAJUD__INSTITUTIONS[B].crm_base_url" in crm.detail


@pytest.mark.parametrize("auth", ["lerian", "oauth2"])
async def test_a_token_url_that_404s_names_token_url_and_auth(http, auth):
    found = await check_connections(http, _settings(auth=auth,
                                                    token_url=f"{MIDAZ}/v1/no-token-here"))
    token = next(c for c in found if c.target == "B token")
    assert not token.ok and token.detail.startswith("404")
    assert "ESTEIRA_SISBAJUD__INSTITUTIONS[B].token_url" in token.detail
    assert "ESTEIRA_SISBAJUD__INSTITUTIONS[B].auth" in token.detail
    assert [c.target for c in found] == ["B token", "Mensageria token"]  # no CRM without one


async def test_the_wrong_mode_on_the_right_host_is_named(http):
    # Lerian's auth service answers JSON only: a form on its path is a 400 there.
    found = await check_connections(http, _settings(
        auth="oauth2", token_url=f"{MIDAZ}/v1/login/oauth/access_token"))
    token = next(c for c in found if c.target == "B token")
    assert not token.ok and "ESTEIRA_SISBAJUD__INSTITUTIONS[B].auth" in token.detail


async def test_a_refused_client_names_the_client_settings(http):
    found = await check_connections(http, _settings(client_secret="wrong"))
    token = next(c for c in found if c.target == "B token")
    assert not token.ok and "client_id" in token.detail and "wrong" not in token.detail


async def test_an_unreachable_token_endpoint_is_named():
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(down)) as http:
        found = await check_connections(http, _settings())
    assert [c.ok for c in found] == [False, False]
    assert "token_url (unreachable)" in found[0].detail


async def test_a_token_for_another_subject_than_executor_m2m_subject_fails_the_check(http):
    settings = _settings()
    settings.sisbajud.m2m_subject = "esteira/someone-else"
    found = await check_connections(http, settings)
    subject = next(c for c in found if c.target == "B subject")
    assert not subject.ok
    assert "'esteira/exec'" in subject.detail and "'esteira/someone-else'" in subject.detail
    assert "ESTEIRA_SISBAJUD__M2M_SUBJECT" in subject.detail
    assert summary(found)[0] is False


async def test_an_opaque_token_without_a_subject_fails_the_check():
    def opaque(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/oauth/token"):
            return httpx.Response(200, json={"access_token": "opaque", "token_type": "Bearer",
                                             "expires_in": 600})
        return httpx.Response(200, json={"items": [], "limit": 1})

    async with httpx.AsyncClient(transport=httpx.MockTransport(opaque)) as http:
        found = await check_connections(http, _settings(auth="oauth2"))
    subject = next(c for c in found if c.target == "B subject")
    assert not subject.ok and subject.detail.startswith("the token carries no subject")


async def test_the_banner_shows_one_line_per_endpoint_over_real_http():
    midaz = midaz_app(clients=CLIENTS)
    with serve(midaz) as midaz_url, serve(mensageria_app(clients=CLIENTS)) as msg:
        settings = _settings(base_url=midaz_url, crm_embedded_version="v2")
        settings.sisbajud.mensageria_url = msg
        # The banner's check reads neither the store nor Temporal.
        face = SisbajudOperations(settings, None, None)  # type: ignore[arg-type]
        rows = dict(await face.connections.rows())
    assert rows["sisbajud B token"] == f"ok {midaz_url}/v1/login/oauth/access_token"
    assert rows["sisbajud B subject"].startswith("ok ")
    assert rows["sisbajud B crm"].startswith(
        f"FAILED {midaz_url}/v2/organizations/{ORG}/instruments: 404")
    assert "crm_embedded_version" in rows["sisbajud B crm"]
    assert rows["sisbajud Mensageria token"].startswith("ok ")
