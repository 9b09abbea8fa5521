"""Route resolution of one write: off, on, or unresolvable (and then the write waits)."""

from __future__ import annotations

import uuid

import pytest

from activities.sisbajud.routing import LEDGER_BINDINGS, ORGANIZATIONS, Resolution, resolve
from shared.settings import Settings, SisbajudSettings

ROUTES = {"transactionRouteId": str(uuid.uuid4()), "sourceRouteId": str(uuid.uuid4()),
          "destinationRouteId": str(uuid.uuid4())}
DOCS = {ORGANIZATIONS: {"organizations": [{"organizationId": "org"},
                                          {"organizationId": "off", "enabled": False}]},
        LEDGER_BINDINGS: {"bindings": [{"organizationId": "org", "ledgerId": "led",
                                        "block": ROUTES}]}}


def _settings(enabled: bool) -> Settings:
    return Settings(sisbajud=SisbajudSettings(systemplane_enabled=enabled))


def test_systemplane_off_writes_without_routes_whatever_the_documents_say():
    assert resolve(_settings(False), DOCS, "org", "led", "block").resolution == Resolution.NONE


@pytest.mark.parametrize(("org", "ledger", "action", "resolution", "code"), [
    ("org", "led", "block", Resolution.ROUTES, ""),
    ("off", "led", "block", Resolution.NONE, ""),
    ("new", "led", "block", Resolution.NONE, ""),
    ("org", "led", "unblock", Resolution.UNRESOLVABLE, "routing.action-missing"),
    ("org", "other", "block", Resolution.UNRESOLVABLE, "routing.binding-missing"),
])
def test_resolution_per_organization_ledger_and_action(org, ledger, action, resolution, code):
    routes = resolve(_settings(True), DOCS, org, ledger, action)
    assert (routes.resolution, routes.code) == (resolution, code)
    if resolution == Resolution.ROUTES:
        assert routes.routes.transaction_route_id == ROUTES["transactionRouteId"]


def test_a_malformed_document_defers_rather_than_guess():
    docs = {**DOCS, LEDGER_BINDINGS: {"bindings": "everything"}}
    routes = resolve(_settings(True), docs, "org", "led", "block")
    assert (routes.resolution, routes.code) == (Resolution.UNRESOLVABLE,
                                                "routing.document-invalid")


@pytest.mark.parametrize("missing", [ORGANIZATIONS, LEDGER_BINDINGS])
def test_with_systemplane_on_a_missing_document_defers_never_writes_without_routes(missing):
    docs = {k: v for k, v in DOCS.items() if k != missing}
    routes = resolve(_settings(True), docs, "org", "led", "block")
    assert (routes.resolution, routes.code) == (Resolution.UNRESOLVABLE,
                                                "routing.document-missing")
    assert missing in routes.problem
