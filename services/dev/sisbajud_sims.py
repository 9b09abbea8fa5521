"""The Midaz and Mensageria simulators as `esteira dev` runs them, with demo data."""

from __future__ import annotations

import logging

import httpx
import uvicorn
from fastapi import FastAPI

from services.simulators.mensageria import create_app as mensageria_app
from services.simulators.midaz import create_app as midaz_app
from services.simulators.oauth import OAuthClient
from shared.contracts.dev_credentials import DEV_M2M_CLIENT_ID, DEV_M2M_CLIENT_SECRET
from shared.settings import Settings

DEMO_DOCUMENT = "12345678900"
DEMO_ORDER_ID = "0190a000-0000-7000-8000-00000000d001"
# The demo order that waits for a person: it names an institution nobody configured.
DEMO_PERSON_ORDER_ID = "0190a000-0000-7000-8000-00000000d002"
DEMO_UNCONFIGURED_INSTITUTION = "DEMO-UNCONFIGURED"
log = logging.getLogger("esteira.simulator")


async def serve_midaz(settings: Settings, *, demo: bool = True,
                      every_institution: bool = False) -> None:
    """Midaz serving the ledgers `midaz_simulator` seeds."""
    app = await midaz_simulator(settings, demo=demo, every_institution=every_institution)
    await _serve(app, settings, settings.ports.midaz, "Midaz")


async def midaz_simulator(settings: Settings, *, demo: bool = True,
                          every_institution: bool = False) -> FastAPI:
    """Midaz with the ledger of every institution that points at the simulator, issuing the
    institutions' clients (all of them known) tokens for `EXECUTOR_M2M_SUBJECT`."""
    # Under `esteira dev` those are the institutions without a `base_url`; `every_institution`
    # takes them all, where the simulator has an address of its own that the institutions
    # name (Compose's `simulators` profile: `http://midaz-sim:8091`).
    subject = settings.sisbajud.m2m_subject
    app = midaz_app(clients=dict(
        _client_of(i.client_id, i.client_secret, subject)
        for i in settings.sisbajud.institutions))
    async with _client(app) as sim:
        for institution in settings.sisbajud.institutions:
            if institution.base_url is not None and not every_institution:
                continue
            ids = {"organizationId": institution.organization_id,
                   "ledgerId": institution.ledger_id}
            (await sim.post("/_sim/bootstrap", json={
                **ids, "assets": [institution.asset_code]})).raise_for_status()
            if demo:
                await _demo_subject(sim, ids)
    return app


async def serve_mensageria(settings: Settings, *, demo: bool = True) -> None:
    """The Mensageria, holding two demo BLOQUEIO orders: one for the first institution (it
    executes), one for an institution nobody configured (it waits for a person)."""
    sis = settings.sisbajud
    app = mensageria_app(clients=dict([_client_of(
        sis.mensageria_client_id, sis.mensageria_client_secret, sis.m2m_subject)]))
    if demo and settings.sisbajud.institutions:
        async with _client(app) as sim:
            (await sim.post("/_sim/orders", json={
                "orderId": DEMO_ORDER_ID, "revision": 1, "operation": "BLOQUEIO",
                "institutionId": settings.sisbajud.institutions[0].id,
                "subject": {"document": DEMO_DOCUMENT}, "amount": "1000.00",
                "allowSalaryAccounts": False, "protocol": "DEMO-0001"})).raise_for_status()
            (await sim.post("/_sim/orders", json={
                "orderId": DEMO_PERSON_ORDER_ID, "revision": 1, "operation": "BLOQUEIO",
                "institutionId": DEMO_UNCONFIGURED_INSTITUTION,
                "subject": {"document": DEMO_DOCUMENT}, "amount": "150.00",
                "allowSalaryAccounts": False, "protocol": "DEMO-0002"})).raise_for_status()
    await _serve(app, settings, settings.ports.mensageria, "Mensageria")


async def _demo_subject(sim: httpx.AsyncClient, ids: dict[str, str]) -> None:
    for alias, available, kind in (("@demo-cc-1", "600.00", "CACC"),
                                   ("@demo-cc-2", "250.00", "CACC"),
                                   ("@demo-salary", "900.00", "SLRY")):
        account = (await sim.post("/_sim/accounts", json={**ids, "alias": alias,
                                                          "available": available})).json()
        await sim.post("/_sim/crm/instruments", json={
            "organizationId": ids["organizationId"], "ledgerId": ids["ledgerId"],
            "document": DEMO_DOCUMENT, "accountId": account["account"]["id"],
            "bankingDetails": {"branch": "0001", "account": alias.removeprefix("@"),
                               "type": kind}})


def _client_of(client_id: str | None, secret, subject: str) -> tuple[str, OAuthClient]:
    """The executor's configured client, or the dev default it falls back to."""
    return (client_id or DEV_M2M_CLIENT_ID, OAuthClient(
        secret.get_secret_value() if secret is not None else DEV_M2M_CLIENT_SECRET, subject))


def _client(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sim")


async def _serve(app: FastAPI, settings: Settings, port: int, name: str) -> None:
    config = uvicorn.Config(app, host=settings.host, port=port, log_config=None,
                            access_log=False, timeout_graceful_shutdown=5)
    log.info("%s simulator listening on http://%s:%s", name, settings.host, port)
    await uvicorn.Server(config).serve()
