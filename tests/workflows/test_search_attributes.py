"""Registering the custom search attributes: the dev server's flags and `esteira migrate`."""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)

from services import search_attributes
from services.dev.temporal_server import dev_server_args
from services.search_attributes import (
    EXIT_FAILED,
    SearchAttributeConflictError,
    dev_server_flags,
    ensure_registered,
    register,
)
from shared.contracts.search_attributes import REGISTERED
from shared.settings import Settings, TemporalSettings
from tests.support.ports import free_ports
from tests.support.visibility import bare_namespace

NAMES = sorted(key.name for key in REGISTERED)
KEYWORD = IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD


async def _custom(client) -> dict[str, int]:
    listed = await client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=client.namespace))
    return dict(listed.custom_attributes)


def test_every_dev_server_registers_them(tmp_path):
    flags = dev_server_flags()
    assert flags[0::2] == ["--search-attribute"] * len(REGISTERED)
    assert sorted(flag.split("=")[0] for flag in flags[1::2]) == NAMES
    args = dev_server_args(Settings(data_dir=tmp_path))
    assert "--search-attribute" in args and "Profile=Keyword" in args


async def test_the_session_dev_server_has_them(temporal_env):
    custom = await _custom(temporal_env.client)
    assert {name: custom.get(name) for name in NAMES} == dict.fromkeys(NAMES, KEYWORD)


def _settings(client) -> Settings:
    return Settings(temporal=TemporalSettings(
        address=client.service_client.config.target_host, namespace=client.namespace))


async def test_migrate_registers_the_missing_ones_once(temporal_env):
    bare = await bare_namespace(temporal_env.client)
    assert not set(NAMES) & set(await _custom(bare))
    assert await register(_settings(bare)) == 0
    custom = await _custom(bare)
    assert {name: custom.get(name) for name in NAMES} == dict.fromkeys(NAMES, KEYWORD)
    assert await ensure_registered(bare, bare.namespace) == [], "a second run adds nothing"


async def test_migrate_refuses_a_name_registered_with_another_type(temporal_env):
    bare = await bare_namespace(temporal_env.client)
    await bare.operator_service.add_search_attributes(AddSearchAttributesRequest(
        namespace=bare.namespace,
        search_attributes={"Profile": IndexedValueType.INDEXED_VALUE_TYPE_TEXT}))
    with pytest.raises(SearchAttributeConflictError, match="Profile is INDEXED_VALUE_TYPE_TEXT"):
        await ensure_registered(bare, bare.namespace)
    assert await register(_settings(bare)) == EXIT_FAILED
    assert "JobStatus" not in await _custom(bare), "nothing is added beside a conflict"


async def test_migrate_fails_when_temporal_never_answers(monkeypatch, caplog):
    monkeypatch.setattr(search_attributes, "CONNECT_WAIT_SECONDS", 0.5)
    monkeypatch.setattr(search_attributes, "CONNECT_RETRY_SECONDS", 0.1)
    (port,) = free_ports(1)
    settings = Settings(temporal=TemporalSettings(address=f"127.0.0.1:{port}"))
    assert await register(settings) == EXIT_FAILED
    assert f"Temporal at 127.0.0.1:{port} did not answer within 0.5 s" in caplog.text
