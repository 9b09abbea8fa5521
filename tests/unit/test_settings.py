"""Configuration: nested environment keys, config file, Temporal names, refusals by key."""

from __future__ import annotations

import pytest

from shared.settings import ConfigurationError, load_settings, unknown_environment_keys


def test_nested_environment_keys_reach_their_section(monkeypatch):
    monkeypatch.setenv("ESTEIRA_PIPELINE__MAX_CONCURRENCY", "7")
    monkeypatch.setenv("ESTEIRA_UPLOAD__ENABLED", "false")
    monkeypatch.setenv("ESTEIRA_PORTS__API", "18080")
    settings = load_settings()
    assert settings.pipeline.max_concurrency == 7
    assert settings.upload.enabled is False
    assert settings.ports.api == 18080


def test_storage_inputs_from_environment_json(monkeypatch, tmp_path):
    monkeypatch.setenv("ESTEIRA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ESTEIRA_STORAGE__INPUTS",
                       '[{"name": "inbox"}, {"name": "folha", "path": "/srv/folha"}]')
    settings = load_settings()
    inbox, folha = settings.storage.inputs
    assert settings.input_folder_path(inbox) == tmp_path.resolve() / "storage" / "input" / "inbox"
    assert str(settings.input_folder_path(folha)) == "/srv/folha"


def test_config_file_is_read_and_environment_wins(monkeypatch, tmp_path):
    config = tmp_path / "esteira.toml"
    config.write_text('environment = "Production"\n[pipeline]\nmax_concurrency = 3\n'
                      'poll_interval_seconds = 5\n')
    monkeypatch.setenv("ESTEIRA_CONFIG_FILE", str(config))
    monkeypatch.setenv("ESTEIRA_PIPELINE__MAX_CONCURRENCY", "9")
    settings = load_settings()
    assert settings.environment == "Production"
    assert settings.pipeline.poll_interval_seconds == 5
    assert settings.pipeline.max_concurrency == 9


def test_official_temporal_names(monkeypatch):
    monkeypatch.setenv("TEMPORAL_ADDRESS", "temporal.example:7233")
    monkeypatch.setenv("TEMPORAL_NAMESPACE", "esteira-prod")
    settings = load_settings()
    assert settings.temporal_address == "temporal.example:7233"
    assert settings.temporal.namespace == "esteira-prod"


def test_embedded_temporal_address_follows_its_port(monkeypatch):
    monkeypatch.delenv("TEMPORAL_ADDRESS", raising=False)
    monkeypatch.setenv("ESTEIRA_PORTS__TEMPORAL", "17233")
    assert load_settings().temporal_address == "127.0.0.1:17233"


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("ESTEIRA_PIPELINE__MAX_CONCURRENCY", "0", "ESTEIRA_PIPELINE__MAX_CONCURRENCY"),
        ("ESTEIRA_PORTS__API", "http", "ESTEIRA_PORTS__API"),
        ("ESTEIRA_LOGGING__LEVEL", "LOUD", "ESTEIRA_LOGGING__LEVEL"),
        ("ESTEIRA_STORAGE__INPUTS", '[{"name": "a"}, {"name": "A"}]', "ESTEIRA_STORAGE__INPUTS"),
    ],
)
def test_invalid_configuration_names_the_key(monkeypatch, key, value, named):
    monkeypatch.setenv(key, value)
    with pytest.raises(ConfigurationError) as refused:
        load_settings()
    assert named in str(refused.value)


def test_database_url_gets_the_async_driver(monkeypatch):
    monkeypatch.setenv("ESTEIRA_DATABASE_URL", "postgresql://esteira:pw@db:5432/esteira")
    assert load_settings().sqlalchemy_url == "postgresql+asyncpg://esteira:pw@db:5432/esteira"


def test_mistyped_top_level_key_is_reported_not_fatal():
    environ = {"ESTEIRA_PIPELNE__MAX_CONCURRENCY": "9", "ESTEIRA_API_KEY": "x",
               "ESTEIRA_PORTS__API": "1"}
    assert unknown_environment_keys(environ) == ["ESTEIRA_PIPELNE__MAX_CONCURRENCY"]
