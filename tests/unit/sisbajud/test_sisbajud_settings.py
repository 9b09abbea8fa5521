"""`Sisbajud:*` from the environment: seed knobs, secrets masked, defaults on the simulators."""

from __future__ import annotations

import json

import httpx
import pytest

from activities.sisbajud.clients import MensageriaClient, MidazClient, midaz_credentials
from activities.sisbajud.setup import MissingCredentials, check_credentials
from shared.logs.masking import secret_values
from shared.settings import (
    DEV_M2M_CLIENT_ID,
    DEV_M2M_CLIENT_SECRET,
    ConfigurationError,
    Settings,
    load_settings,
    seconds_of,
)


def test_environment_names_and_secret_masking(monkeypatch):
    monkeypatch.setenv("ESTEIRA_SISBAJUD__TICK_EVERY_SECONDS", "5")
    monkeypatch.setenv("ESTEIRA_SISBAJUD__HUB_WEBHOOK_MAX_SKEW_SECONDS", "120")
    monkeypatch.setenv("ESTEIRA_SISBAJUD__HUB_WEBHOOK_SECRETS", json.dumps(["whsec_QUJDRA==",
                                                                             "whsec_RUZHSA=="]))
    monkeypatch.setenv("ESTEIRA_SISBAJUD__MENSAGERIA_CLIENT_SECRET", "mensageria-client-secret")
    monkeypatch.setenv("ESTEIRA_SISBAJUD__INSTITUTIONS", json.dumps([{
        "id": "B1", "base_url": "https://midaz.example", "client_id": "exec",
        "client_secret": "midaz-client-secret", "organization_id": "o", "ledger_id": "l",
        "crm_mode": "legacy", "crm_embedded_version": "v1", "alias_lookup": "exact"}]))
    settings = Settings()
    sis = settings.sisbajud
    assert (sis.tick_every_seconds, sis.hub_webhook_max_skew_seconds) == (5, 120)
    assert len(sis.hub_webhook_secrets) == 2 and sis.institutions[0].crm_mode == "legacy"
    assert (sis.institutions[0].crm_embedded_version, sis.institutions[0].alias_lookup) == (
        "v1", "exact")
    secrets = secret_values(settings)
    assert {"whsec_QUJDRA==", "whsec_RUZHSA==", "midaz-client-secret",
            "mensageria-client-secret"} <= set(secrets)
    assert "midaz-client-secret" not in repr(settings)
    assert "mensageria-client-secret" not in repr(settings)


def test_the_seed_names_are_read_too_and_esteira_names_win(monkeypatch):
    for name, value in {"EXECUTOR_TICK_EVERY": "10s", "EXECUTOR_HEARTBEAT_EVERY": "2m",
                        "EXECUTOR_HUMAN_DECISION_AFTER_BEATS": "5",
                        "RESPONSE_DEADLINE_MARGIN": "1h30m",
                        "EXECUTOR_ORPHAN_RECONCILE_WINDOW": "72h",
                        "EXECUTOR_HUB_WEBHOOK_MAX_SKEW_SEC": "90",
                        "EXECUTOR_M2M_SUBJECT": "exec-7", "SYSTEMPLANE_ENABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    sis = Settings().sisbajud
    assert (sis.tick_every_seconds, sis.heartbeat_every_seconds,
            sis.human_decision_after_beats, sis.response_deadline_margin_seconds,
            sis.orphan_reconcile_window_seconds, sis.hub_webhook_max_skew_seconds,
            sis.m2m_subject, sis.systemplane_enabled) == (
        10, 120, 5, 5400, 72 * 3600, 90, "exec-7", True)
    monkeypatch.setenv("ESTEIRA_SISBAJUD__TICK_EVERY_SECONDS", "3")
    assert Settings().sisbajud.tick_every_seconds == 3
    monkeypatch.setenv("EXECUTOR_HEARTBEAT_EVERY", "soon")
    with pytest.raises(ConfigurationError):
        load_settings()


@pytest.mark.parametrize(("text", "seconds"), [("30s", 30), ("48h", 172800), ("1h30m", 5400),
                                               ("250ms", 0.25), ("45", 45), ("1.5h", 5400)])
def test_go_durations(text, seconds):
    assert seconds_of(text) == seconds


@pytest.mark.parametrize("text", ["", "s", "10 s", "10d", "1h-3m"])
def test_not_durations(text):
    with pytest.raises(ValueError):
        seconds_of(text)


def test_defaults_point_at_the_dev_simulators_with_the_dev_client():
    settings = Settings(ports={"midaz": 9101, "mensageria": 9102})
    institution = settings.sisbajud.institutions[0]
    midaz = MidazClient.for_institution(httpx.AsyncClient(), settings, institution)
    mensageria = MensageriaClient.from_settings(httpx.AsyncClient(), settings)
    assert midaz.base_url == "http://127.0.0.1:9101"
    assert mensageria.base_url == "http://127.0.0.1:9102"
    credentials = midaz_credentials(settings, institution)
    assert credentials.token_url == "http://127.0.0.1:9101/v1/login/oauth/access_token"
    assert mensageria.m2m.credentials.token_url == (
        "http://127.0.0.1:9102/v1/login/oauth/access_token")
    assert (credentials.auth, mensageria.m2m.credentials.auth) == ("lerian", "lerian")
    assert (credentials.client_id, credentials.client_secret.get_secret_value()) == (
        DEV_M2M_CLIENT_ID, DEV_M2M_CLIENT_SECRET)
    assert (institution.crm_embedded_version, institution.alias_lookup) == ("v1", "query")


def test_outside_development_client_credentials_are_required():
    with pytest.raises(MissingCredentials) as refused:
        check_credentials(Settings(environment="Production"))
    assert "MENSAGERIA_CLIENT_ID" in str(refused.value) and "SIMBANK" in str(refused.value)
    with pytest.raises(MissingCredentials):
        MensageriaClient.from_settings(httpx.AsyncClient(), Settings(environment="Production"))
    check_credentials(Settings())
    check_credentials(Settings(environment="Production", sisbajud={
        "mensageria_client_id": "exec", "mensageria_client_secret": "s1",
        "institutions": [{"id": "B", "organization_id": "o", "ledger_id": "l",
                          "client_id": "exec", "client_secret": "s2"}]}))


@pytest.mark.parametrize(("variable", "value", "named"), [
    ("ESTEIRA_SISBAJUD__MENSAGERIA_TOKEN", "m2m-token",
     "ESTEIRA_SISBAJUD__MENSAGERIA_TOKEN (sisbajud.mensageria_token)"),
    ("ESTEIRA_SISBAJUD__INSTITUTIONS",
     json.dumps([{"id": "B", "organization_id": "o", "ledger_id": "l", "token": "t"}]),
     "ESTEIRA_SISBAJUD__INSTITUTIONS__TOKEN (sisbajud.institutions.0.token)"),
])
def test_an_unknown_key_is_refused_by_name(monkeypatch, variable, value, named):
    # A retired static-token key read as nothing would leave the executor on the dev client.
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as refused:
        load_settings()
    lines = str(refused.value).splitlines()
    assert lines[1:] == [f"  {named}: Extra inputs are not permitted"]
