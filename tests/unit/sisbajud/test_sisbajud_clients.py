"""Per-institution routes of the real services, and the gateway's fetch without a token."""

from __future__ import annotations

import httpx
import pytest

from activities.sisbajud.clients import MidazClient
from activities.sisbajud.operator import OrderUnavailable, SisbajudOperations
from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.oauth import OAuthClient
from shared.settings import InstitutionSettings, Settings, SisbajudSettings
from tests.support.tokens import is_token_request, token_answer


def _token(request: httpx.Request) -> httpx.Response:
    return token_answer(request)


@pytest.mark.parametrize(("mode", "version", "url"), [
    ("embedded", "v2", "http://midaz/v2/organizations/o/instruments"),  # a gateway's mapping
    ("embedded", "v1", "http://midaz/v1/organizations/o/instruments"),
    ("legacy", "v2", "http://crm/v1/aliases")])
async def test_the_crm_route_follows_the_institution(mode, version, url):
    seen: list[httpx.Request] = []

    def midaz(request: httpx.Request) -> httpx.Response:
        if is_token_request(request):
            return _token(request)
        seen.append(request)
        return httpx.Response(200, json={"items": [{"accountId": "a"}], "page": 1})

    institution = InstitutionSettings(id="B", base_url="http://midaz", organization_id="o",
                                      ledger_id="l", crm_mode=mode, crm_base_url="http://crm",
                                      crm_embedded_version=version)
    settings = Settings(sisbajud=SisbajudSettings(institutions=[institution]))
    async with httpx.AsyncClient(transport=httpx.MockTransport(midaz)) as http:
        found = await MidazClient.for_institution(http, settings, institution).instruments("1")
    assert found == [{"accountId": "a"}]
    (request,) = seen
    assert str(request.url.copy_with(query=None)) == url
    assert request.url.params["document"] == "1"
    assert request.headers["Authorization"] == "Bearer tok"
    assert (request.headers.get("X-Organization-Id") == "o") is (mode == "legacy")


async def test_the_gateway_answers_unavailable_when_the_mensageria_refuses_our_client():
    app = mensageria_app(clients={"exec": OAuthClient("right", "exec")})
    wrong = Settings(sisbajud=SisbajudSettings(
        mensageria_url="http://mensageria.test", mensageria_client_id="exec",
        mensageria_client_secret="wrong"))
    async with httpx.AsyncClient(
            mounts={"http://mensageria.test": httpx.ASGITransport(app)}) as http:
        # No store and no Temporal: the fetch reads neither.
        face = SisbajudOperations(wrong, None, None, http=http)  # type: ignore[arg-type]
        with pytest.raises(OrderUnavailable) as raised:
            await face.deliveries.fetch("0190a000-0000-7000-8000-00000000d001")
    assert "refused client exec: 401 invalid client credentials" in str(raised.value)
