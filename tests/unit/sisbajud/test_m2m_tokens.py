"""OAuth client credentials: one token for many calls, renewed near expiry and once on a 401."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from types import SimpleNamespace
from urllib.parse import parse_qsl

import httpx
import pytest
from authlib.oauth2.rfc6749 import wrappers

from activities.sisbajud.clients import (
    MensageriaClient,
    MensageriaTokenError,
    MidazClient,
    UpstreamError,
)
from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from services.simulators.oauth import OAuthClient
from shared.logs.masking import secret_values
from shared.settings import InstitutionSettings, Settings, SisbajudSettings
from tests.support.tokens import is_token_request, token_answer

MIDAZ, MENSAGERIA = "http://midaz.test", "http://mensageria.test"
ORG = "0190b000-0000-7000-8000-0000000000a1"
LEDGER = "0190b000-0000-7000-8000-0000000000a2"
SECRET = "s3cret-of-the-executor-client"
CLIENTS = {"exec": OAuthClient(SECRET, "exec-subject")}


def _settings(secret: str = SECRET, leeway: float = 60) -> Settings:
    return Settings(sisbajud=SisbajudSettings(
        mensageria_url=MENSAGERIA, mensageria_client_id="exec", mensageria_client_secret=secret,
        m2m_token_leeway_seconds=leeway,
        institutions=[InstitutionSettings(id="B", base_url=MIDAZ, client_id="exec",
                                          client_secret=secret, organization_id=ORG,
                                          ledger_id=LEDGER)]))


@pytest.fixture
async def sims():
    """Strict simulators (only the tokens they issued) behind one httpx client."""
    midaz, mensageria = midaz_app(clients=CLIENTS), mensageria_app(clients=CLIENTS)
    http = httpx.AsyncClient(mounts={MIDAZ: httpx.ASGITransport(midaz),
                                     MENSAGERIA: httpx.ASGITransport(mensageria)})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(midaz), base_url=MIDAZ) as sim:
        (await sim.post("/_sim/bootstrap", json={"organizationId": ORG, "ledgerId": LEDGER})
         ).raise_for_status()
    yield SimpleNamespace(midaz=midaz, mensageria=mensageria, http=http)
    await http.aclose()


def _midaz(sims, settings: Settings | None = None) -> MidazClient:
    settings = settings or _settings()
    return MidazClient.for_institution(sims.http, settings, settings.sisbajud.institutions[0])


async def test_one_token_serves_many_calls_across_clients(sims):
    settings = _settings()
    await asyncio.gather(*(_midaz(sims, settings).default_balance("@nobody") for _ in range(10)))
    for _ in range(5):  # new client objects, as each activity builds them, share the token
        assert await _midaz(sims, settings).subject() == "exec-subject"
    mensageria = MensageriaClient.from_settings(sims.http, settings)
    statuses = {(await mensageria.fetch_order("missing")).status_code for _ in range(5)}
    assert statuses == {404}  # authorised: the order is just not there
    assert (sims.midaz.state.oauth.requests, sims.mensageria.state.oauth.requests) == (1, 1)


async def test_a_token_about_to_expire_is_renewed_before_use(sims, monkeypatch):
    midaz = _midaz(sims)
    await midaz.default_balance("@nobody")
    first = (await midaz.m2m.token())["access_token"]
    # Authlib's clock moves to within the leeway of the token's end (3600 s, leeway 60).
    monkeypatch.setattr(wrappers, "time", SimpleNamespace(time=lambda: time.time() + 3550))
    await midaz.default_balance("@nobody")
    assert sims.midaz.state.oauth.requests == 2
    assert (await midaz.m2m.token())["access_token"] != first


async def test_a_401_gets_one_fresh_token_and_one_retry(sims):
    midaz = _midaz(sims)
    await midaz.default_balance("@nobody")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(sims.midaz),
                                 base_url=MIDAZ) as sim:
        assert (await sim.post("/_sim/oauth/expire")).json() == {"expired": 1}
    assert await midaz.default_balance("@nobody") is None  # authorised: no such alias
    assert sims.midaz.state.oauth.requests == 2


async def test_a_second_401_fails_clearly_without_looping(caplog):
    calls = {"token": 0, "api": 0}

    def refusing(request: httpx.Request) -> httpx.Response:
        if is_token_request(request):
            calls["token"] += 1
            return token_answer(request, f"t{calls['token']}")
        calls["api"] += 1
        return httpx.Response(401, text="Unauthorized")  # lib-auth's refusal

    async with httpx.AsyncClient(transport=httpx.MockTransport(refusing)) as http:
        settings = _settings()
        midaz = MidazClient.for_institution(http, settings, settings.sisbajud.institutions[0])
        with caplog.at_level(logging.ERROR), pytest.raises(UpstreamError) as raised:
            await midaz.default_balance("@nobody")
    assert raised.value.status == 401
    assert calls == {"token": 2, "api": 2}
    assert "refused a freshly issued token" in caplog.text


async def test_a_refused_client_is_a_clear_error_and_no_secret_is_logged(sims, caplog):
    wrong = "not-the-secret-at-all"
    settings = _settings(secret=wrong)
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(UpstreamError) as raised:
            await _midaz(sims, settings).default_balance("@nobody")
        with pytest.raises(MensageriaTokenError) as fetch:
            await MensageriaClient.from_settings(sims.http, settings).fetch_order("o")
        # and a good run with a refresh on 401, for the tokens that pass through
        good = _midaz(sims)
        await good.default_balance("@nobody")
        token = (await good.m2m.token())["access_token"]
    assert raised.value.status == 401
    assert "refused client exec: 401 invalid client credentials" in str(raised.value)
    assert "refused client exec" in str(fetch.value)
    text = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert wrong not in text and SECRET not in text and token not in text
    assert {wrong} <= set(secret_values(settings))  # and the masker knows the secret


async def test_an_unreachable_token_endpoint_is_a_transport_failure():
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(down)) as http:
        settings = _settings()
        midaz = MidazClient.for_institution(http, settings, settings.sisbajud.institutions[0])
        with pytest.raises(UpstreamError) as raised:
            await midaz.default_balance("@nobody")
    assert raised.value.status is None and raised.value.retryable


async def test_the_lerian_mode_posts_lib_auths_json_and_reads_accesstoken():
    seen: list[httpx.Request] = []

    def auth_service(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/v1/login/oauth/access_token":
            return httpx.Response(200, json={"accessToken": "jwt-1", "tokenType": "Bearer",
                                             "expiresIn": 900, "refreshToken": ""})
        return httpx.Response(200, json={"items": []})

    settings = Settings(sisbajud=SisbajudSettings(institutions=[InstitutionSettings(
        id="B", base_url=MIDAZ, token_url="http://auth.test/v1/login/oauth/access_token",
        client_id="exec", client_secret=SECRET, organization_id=ORG, ledger_id=LEDGER)]))
    async with httpx.AsyncClient(transport=httpx.MockTransport(auth_service)) as http:
        midaz = MidazClient.for_institution(http, settings, settings.sisbajud.institutions[0])
        await midaz.default_balance("@nobody")
        token = await midaz.m2m.token()
    login, api = seen
    assert str(login.url) == "http://auth.test/v1/login/oauth/access_token"
    assert login.headers["content-type"] == "application/json"
    assert "authorization" not in login.headers
    assert json.loads(login.content) == {"grantType": "client_credentials", "clientId": "exec",
                                         "clientSecret": SECRET}
    assert api.headers["authorization"] == "Bearer jwt-1"
    assert token["expires_in"] == 900 and token["expires_at"] > time.time() + 800


async def test_the_oauth2_mode_posts_a_form_with_basic_and_reads_access_token():
    seen: list[httpx.Request] = []

    def token_server(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == "/token":
            return httpx.Response(200, json={"access_token": "opaque-1", "token_type": "Bearer",
                                             "expires_in": 900})
        return httpx.Response(200, json={"items": []})

    settings = Settings(sisbajud=SisbajudSettings(institutions=[InstitutionSettings(
        id="B", base_url=MIDAZ, auth="oauth2", token_url="http://idp.test/token",
        client_id="exec", client_secret=SECRET, organization_id=ORG, ledger_id=LEDGER)]))
    async with httpx.AsyncClient(transport=httpx.MockTransport(token_server)) as http:
        midaz = MidazClient.for_institution(http, settings, settings.sisbajud.institutions[0])
        await midaz.default_balance("@nobody")
    login, api = seen
    assert login.headers["content-type"].startswith("application/x-www-form-urlencoded")
    assert login.headers["authorization"].startswith("Basic ")
    assert dict(parse_qsl(login.content.decode())) == {"grant_type": "client_credentials"}
    assert api.headers["authorization"] == "Bearer opaque-1"


async def test_a_lerian_answer_without_expiresin_expires_with_the_jwts_exp():
    exp = int(time.time()) + 1200
    claims = base64.urlsafe_b64encode(json.dumps({"exp": exp}).encode()).decode().rstrip("=")

    def auth_service(request: httpx.Request) -> httpx.Response:
        if is_token_request(request):
            return httpx.Response(200, json={"accessToken": f"e30.{claims}.sig"})
        return httpx.Response(200, json={"items": []})

    async with httpx.AsyncClient(transport=httpx.MockTransport(auth_service)) as http:
        settings = _settings()
        token = await MidazClient.for_institution(
            http, settings, settings.sisbajud.institutions[0]).m2m.token()
    assert abs(token["expires_at"] - exp) <= 2 and token["token_type"] == "Bearer"


async def test_three_institutions_on_one_endpoint_and_client_share_one_token(sims):
    """One token per (token endpoint, client id), whatever institution asks; renewed before
    it expires and once on a 401, never per institution."""
    institutions = [InstitutionSettings(id=name, base_url=MIDAZ, client_id="exec",
                                        client_secret=SECRET, organization_id=ORG,
                                        ledger_id=LEDGER) for name in ("A", "B", "C")]
    settings = Settings(sisbajud=SisbajudSettings(
        institutions=institutions, mensageria_url=MENSAGERIA, mensageria_client_id="exec",
        mensageria_client_secret=SECRET))
    for _ in range(4):  # every activity builds its clients anew, institution after institution
        for institution in institutions:
            midaz = MidazClient.for_institution(sims.http, settings, institution)
            await midaz.default_balance("@nobody")
    assert sims.midaz.state.oauth.requests == 1
    async with httpx.AsyncClient(transport=httpx.ASGITransport(sims.midaz),
                                 base_url=MIDAZ) as sim:
        await sim.post("/_sim/oauth/expire")
    for institution in institutions:  # the first 401 renews; the others use the new token
        midaz = MidazClient.for_institution(sims.http, settings, institution)
        await midaz.default_balance("@nobody")
    assert sims.midaz.state.oauth.requests == 2


async def test_a_lerian_refreshtoken_never_turns_renewal_into_a_refresh_grant(monkeypatch):
    logins: list[dict] = []

    def auth_service(request: httpx.Request) -> httpx.Response:
        if is_token_request(request):
            logins.append(json.loads(request.content))
            return httpx.Response(200, json={"accessToken": f"jwt-{len(logins)}",
                                             "tokenType": "Bearer", "expiresIn": 600,
                                             "refreshToken": "r-1"})
        return httpx.Response(200, json={"items": []})

    async with httpx.AsyncClient(transport=httpx.MockTransport(auth_service)) as http:
        settings = _settings()
        midaz = MidazClient.for_institution(http, settings, settings.sisbajud.institutions[0])
        await midaz.default_balance("@nobody")
        monkeypatch.setattr(wrappers, "time", SimpleNamespace(time=lambda: time.time() + 590))
        await midaz.default_balance("@nobody")
    assert [login["grantType"] for login in logins] == ["client_credentials"] * 2
