"""The connection check in readiness (the worker's boot finding) and in the preflight."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from activities.sisbajud.connections import (
    CONNECTIONS_FINDING,
    recheck_until_ok,
    record_connections,
)
from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from tests.api.conftest import API_KEY

AUTH = {"X-API-Key": API_KEY}
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


def _simulators(settings) -> httpx.AsyncClient:
    midaz = f"http://{settings.host}:{settings.ports.midaz}"
    mensageria = f"http://{settings.host}:{settings.ports.mensageria}"
    return httpx.AsyncClient(mounts={midaz: httpx.ASGITransport(midaz_app()),
                                     mensageria: httpx.ASGITransport(mensageria_app())})


async def _check(api) -> dict:
    api.context.settings.readiness.worker_domains = ["sisbajud"]
    details = (await api.get("/api/ready/details", headers=AUTH)).json()
    return next(c for c in details["checks"] if c["name"] == CONNECTIONS_FINDING)


@SQLITE_ONLY
async def test_readiness_shows_the_boot_check_and_gates_on_it(api):
    settings = api.context.settings
    assert (await _check(api))["ok"] is True  # not checked yet
    async with _simulators(settings) as http:
        await record_connections(api.context.sessions, settings, http, "test-worker")
    line = await _check(api)
    assert (line["ok"], line["gating"], line["detail"]) == (True, True,
                                                          "4 endpoint(s) answered")
    settings.sisbajud.institutions[0].crm_embedded_version = "v2"
    async with _simulators(settings) as http:
        await record_connections(api.context.sessions, settings, http, "test-worker")
    line = await _check(api)
    assert line["ok"] is False
    assert "ESTEIRA_SISBAJUD__INSTITUTIONS[SIMBANK].crm_embedded_version" in line["detail"]


@SQLITE_ONLY
async def test_the_preflight_calls_each_configured_endpoint(api, monkeypatch):
    settings = api.context.settings
    # Nothing listens on a closed port: each line says so and names the setting.
    settings.sisbajud.institutions[0].base_url = "http://127.0.0.1:9"
    settings.sisbajud.mensageria_url = "http://127.0.0.1:9"
    report = (await api.get("/v1/admin/ledger-routing/preflight", headers=AUTH)).json()
    assert [(c["target"], c["ok"]) for c in report["connections"]] == [
        ("SIMBANK token", False), ("Mensageria token", False)]
    assert report["connections"][0]["url"] == "http://127.0.0.1:9/v1/login/oauth/access_token"
    assert "ESTEIRA_SISBAJUD__INSTITUTIONS[SIMBANK].token_url" in (
        report["connections"][0]["detail"])


@SQLITE_ONLY
async def test_a_failed_boot_check_is_checked_again_until_it_passes(api):
    settings = api.context.settings
    up = {"midaz": False}
    apps = _simulators(settings)

    async def flaky(request: httpx.Request) -> httpx.Response:
        if not up["midaz"]:  # the systems still starting
            raise httpx.ConnectError("connection refused", request=request)
        return await apps.send(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(flaky)) as http:
        await record_connections(api.context.sessions, settings, http, "test-worker")
        assert (await _check(api))["ok"] is False
        recheck = asyncio.create_task(recheck_until_ok(api.context.sessions, settings, http,
                                                       "test-worker", every=0.05))
        await asyncio.sleep(0.2)
        assert not recheck.done()
        up["midaz"] = True
        await asyncio.wait_for(recheck, 5)
    await apps.aclose()
    assert (await _check(api))["ok"] is True
