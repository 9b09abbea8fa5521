"""`Sisbajud:*` from the environment: seed knobs, secrets masked, defaults on the simulators."""

from __future__ import annotations

import json

import pytest

from activities.sisbajud.clients import MensageriaClient, MidazClient
from activities.sisbajud.setup import MissingCredentials, check_credentials
from shared.logs.masking import secret_values
from shared.settings import Settings


def test_environment_names_and_secret_masking(monkeypatch):
    monkeypatch.setenv("ESTEIRA_SISBAJUD__TICK_EVERY_SECONDS", "5")
    monkeypatch.setenv("ESTEIRA_SISBAJUD__HUB_WEBHOOK_MAX_SKEW_SECONDS", "120")
    monkeypatch.setenv("ESTEIRA_SISBAJUD__HUB_WEBHOOK_SECRETS", json.dumps(["whsec_QUJDRA==",
                                                                             "whsec_RUZHSA=="]))
    monkeypatch.setenv("ESTEIRA_SISBAJUD__INSTITUTIONS", json.dumps([{
        "id": "B1", "base_url": "https://midaz.example", "token": "midaz-secret-token",
        "organization_id": "o", "ledger_id": "l", "crm_mode": "legacy"}]))
    settings = Settings()
    sis = settings.sisbajud
    assert (sis.tick_every_seconds, sis.hub_webhook_max_skew_seconds) == (5, 120)
    assert len(sis.hub_webhook_secrets) == 2 and sis.institutions[0].crm_mode == "legacy"
    secrets = secret_values(settings)
    assert {"whsec_QUJDRA==", "whsec_RUZHSA==", "midaz-secret-token"} <= set(secrets)
    assert "midaz-secret-token" not in repr(settings)


def test_defaults_point_at_the_dev_simulators():
    settings = Settings(ports={"midaz": 9101, "mensageria": 9102})
    midaz = MidazClient.for_institution(None, settings, settings.sisbajud.institutions[0])
    mensageria = MensageriaClient.from_settings(None, settings)  # type: ignore[arg-type]
    assert midaz.base_url == "http://127.0.0.1:9101"
    assert mensageria.base_url == "http://127.0.0.1:9102"
    assert midaz.headers["Authorization"].startswith("Bearer ")
    production = Settings(environment="Production")
    assert MensageriaClient.from_settings(None, production).headers == {}  # type: ignore[arg-type]


def test_outside_development_tokens_are_required():
    with pytest.raises(MissingCredentials) as refused:
        check_credentials(Settings(environment="Production"))
    assert "MENSAGERIA_TOKEN" in str(refused.value) and "SIMBANK" in str(refused.value)
    check_credentials(Settings())
