"""The simulators' token endpoints (Lerian's JSON and RFC 6749's form) and their bearer check:
only unexpired RS256 application tokens they issued."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from services.simulators.oauth import OAuthClient, parse_client

CLIENTS = {"exec": OAuthClient("exec-secret", "exec-subject")}
ORG = "0190b000-0000-7000-8000-0000000000a1"
LEDGER = "0190b000-0000-7000-8000-0000000000a2"
MIDAZ_API = f"/v1/organizations/{ORG}/ledgers/{LEDGER}"
MENSAGERIA_API = "/v1/sisbajud/execution/orders/o-1"


@pytest.fixture(params=["midaz", "mensageria"])
async def sim(request):
    """A strict simulator client and the API path that needs a token."""
    if request.param == "midaz":
        app, path = midaz_app(clients=CLIENTS), MIDAZ_API
    else:
        app, path = mensageria_app(clients=CLIENTS), MENSAGERIA_API
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://sim") as c:
        if request.param == "midaz":
            (await c.post("/_sim/bootstrap", json={"organizationId": ORG, "ledgerId": LEDGER})
             ).raise_for_status()
        else:
            (await c.post("/_sim/orders", json={"orderId": "o-1"})).raise_for_status()
        c.kind, c.path = request.param, path
        yield c


def _unauthorised(sim, response: httpx.Response, midaz_text: str) -> None:
    assert response.status_code == 401
    if sim.kind == "midaz":  # lib-auth's Authorize: plain text before any Midaz handler
        assert response.headers["content-type"].startswith("text/plain")
        assert response.text == midaz_text
    else:
        body = response.json()
        assert body["code"] == "UNAUTHORIZED" and body["message"]


def _claims(token: str) -> tuple[dict, dict]:
    head, body, _ = token.split(".")
    return tuple(json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
                 for p in (head, body))


async def _token(sim, **kwargs) -> httpx.Response:
    return await sim.post("/oauth/token", **kwargs)


async def test_basic_auth_and_form_credentials_both_get_a_token(sim):
    for kwargs in ({"auth": ("exec", "exec-secret"), "data": {"grant_type": "client_credentials"}},
                   {"data": {"grant_type": "client_credentials", "client_id": "exec",
                             "client_secret": "exec-secret"}}):
        response = await _token(sim, **kwargs)
        assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
        body = response.json()
        assert (body["token_type"], body["expires_in"], body["sub"]) == (
            "Bearer", 3600, "exec-subject")
        api = await sim.get(sim.path, headers={"Authorization": f"Bearer {body['access_token']}"})
        assert api.status_code == 200


async def test_lerian_json_login_answers_accesstoken_as_lib_auth_reads_it(sim):
    response = await sim.post("/v1/login/oauth/access_token", json={
        "grantType": "client_credentials", "clientId": "exec", "clientSecret": "exec-secret"})
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    body = response.json()
    assert (body["tokenType"], body["expiresIn"], body["refreshToken"]) == ("Bearer", 3600, "")
    header, claims = _claims(body["accessToken"])
    assert header["alg"] == "RS256"
    assert (claims["type"], claims["sub"], claims["azp"]) == ("application", "exec-subject",
                                                              "exec")
    assert claims["exp"] - claims["iat"] == 3600
    api = await sim.get(sim.path, headers={"Authorization": f"Bearer {body['accessToken']}"})
    assert api.status_code == 200


async def test_lerian_json_login_refuses_as_commons_response(sim):
    wrong = await sim.post("/v1/login/oauth/access_token", json={
        "grantType": "client_credentials", "clientId": "exec", "clientSecret": "nope"})
    assert wrong.status_code == 401 and wrong.json()["code"] == "401"
    assert wrong.json()["message"]
    form = await sim.post("/v1/login/oauth/access_token", data={
        "grant_type": "client_credentials", "client_id": "exec", "client_secret": "exec-secret"})
    assert form.status_code == 400 and form.json()["code"] == "400"
    grant = await sim.post("/v1/login/oauth/access_token", json={
        "grantType": "password", "clientId": "exec", "clientSecret": "exec-secret"})
    assert grant.status_code == 400


async def test_a_forged_jwt_with_our_claims_is_refused(sim):
    token = (await _token(sim, auth=("exec", "exec-secret"),
                          data={"grant_type": "client_credentials"})).json()["access_token"]
    head, body, signature = token.split(".")
    forged = f"{head}.{body}.{signature[:-4]}AAAA"
    _unauthorised(sim, await sim.get(sim.path, headers={"Authorization": f"Bearer {forged}"}),
                  "Unauthorized")


async def test_wrong_credentials_and_grants_are_refused(sim):
    wrong = await _token(sim, auth=("exec", "nope"), data={"grant_type": "client_credentials"})
    assert (wrong.status_code, wrong.json()) == (401, {"error": "invalid_client"})
    unknown = await _token(sim, auth=("who", "exec-secret"),
                           data={"grant_type": "client_credentials"})
    assert unknown.status_code == 401
    grant = await _token(sim, auth=("exec", "exec-secret"), data={"grant_type": "password"})
    assert (grant.status_code, grant.json()) == (400, {"error": "unsupported_grant_type"})


async def test_missing_wrong_and_expired_tokens_get_401(sim):
    _unauthorised(sim, await sim.get(sim.path), "Missing Token")
    _unauthorised(sim, await sim.get(sim.path, headers={"Authorization": "Bearer forged"}),
                  "Unauthorized")
    token = (await _token(sim, auth=("exec", "exec-secret"),
                          data={"grant_type": "client_credentials"})).json()["access_token"]
    bearer = {"Authorization": f"Bearer {token}"}
    assert (await sim.get(sim.path, headers=bearer)).status_code == 200
    assert (await sim.post("/_sim/oauth/expire")).json() == {"expired": 1}
    _unauthorised(sim, await sim.get(sim.path, headers=bearer), "Unauthorized")
    assert (await sim.get("/_sim/oauth")).json() == {"tokenRequests": 1, "issued": 1}


async def test_midaz_tokens_expire_on_the_simulated_clock():
    app = midaz_app(clients=CLIENTS, token_ttl_s=60)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://sim") as c:
        await c.post("/_sim/bootstrap", json={"organizationId": ORG, "ledgerId": LEDGER})
        token = (await c.post("/oauth/token", auth=("exec", "exec-secret"),
                              data={"grant_type": "client_credentials"})).json()["access_token"]
        bearer = {"Authorization": f"Bearer {token}"}
        assert (await c.get(MIDAZ_API, headers=bearer)).status_code == 200
        app.state.sim.clock.advance(61)
        refused = await c.get(MIDAZ_API, headers=bearer)
    assert (refused.status_code, refused.text) == (401, "Unauthorized")


def test_the_client_flag():
    assert parse_client("exec:s3:sub-1") == ("exec", OAuthClient("s3", "sub-1"))
    assert parse_client("exec:s3") == ("exec", OAuthClient("s3", "exec"))
    with pytest.raises(ValueError):
        parse_client("exec")
