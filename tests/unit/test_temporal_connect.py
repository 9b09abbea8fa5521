"""`shared.temporal.connect`: Temporal's own client configuration (envconfig) first, what the
settings name explicitly over it; an API key always travels over TLS."""

from __future__ import annotations

import pytest
from temporalio.client import Client

from shared import temporal
from shared.settings import Settings, TemporalSettings


@pytest.fixture
def no_temporal_env(monkeypatch, tmp_path):
    for key in ("TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_API_KEY", "TEMPORAL_TLS",
                "TEMPORAL_PROFILE", "TEMPORAL_CONFIG_FILE"):
        monkeypatch.delenv(key, raising=False)
    # No operator's ~/.config/temporalio/temporal.toml leaks in.
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))


@pytest.fixture
def connect_calls(monkeypatch) -> list[dict]:
    calls: list[dict] = []

    async def record(**kwargs):
        calls.append(kwargs)
        return "client"

    monkeypatch.setattr(Client, "connect", staticmethod(record))
    return calls


async def test_an_api_key_is_sent_over_tls(no_temporal_env, monkeypatch, connect_calls):
    monkeypatch.setenv("TEMPORAL_API_KEY", "cloud-key")
    settings = Settings(temporal=TemporalSettings(address="ns.acct.tmprl.cloud:7233",
                                                  namespace="ns.acct"))
    await temporal.connect(settings)
    [call] = connect_calls
    assert (call["target_host"], call["namespace"]) == ("ns.acct.tmprl.cloud:7233", "ns.acct")
    assert call["api_key"] == "cloud-key" and call["tls"] is True


async def test_without_a_key_or_tls_settings_the_connection_is_plaintext(no_temporal_env,
                                                                         connect_calls):
    await temporal.connect(Settings(temporal=TemporalSettings(address="127.0.0.1:7233")))
    [call] = connect_calls
    assert call["tls"] is False and "api_key" not in call


async def test_a_profile_file_gives_what_the_settings_leave_unnamed(no_temporal_env, tmp_path,
                                                                    monkeypatch, connect_calls):
    profile = tmp_path / "temporal.toml"
    profile.write_text('[profile.default]\naddress = "temporal.example.internal:7233"\n'
                       'namespace = "esteira-prod"\napi_key = "from-file"\n')
    monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(profile))
    await temporal.connect(Settings(temporal=TemporalSettings()))
    [call] = connect_calls
    assert call["target_host"] == "temporal.example.internal:7233"
    assert call["namespace"] == "esteira-prod"
    assert call["api_key"] == "from-file" and call["tls"] is True
    # A namespace the settings name explicitly wins over the file's.
    await temporal.connect(Settings(temporal=TemporalSettings(namespace="other")))
    assert connect_calls[1]["namespace"] == "other"


def test_the_api_key_setting_is_a_secret(no_temporal_env, monkeypatch):
    monkeypatch.setenv("TEMPORAL_API_KEY", "cloud-key")
    settings = TemporalSettings()
    assert settings.api_key.get_secret_value() == "cloud-key"
    assert "cloud-key" not in repr(settings)
