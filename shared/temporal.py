"""The Temporal client every process uses: one connection, one data converter for all."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes
from temporalio.envconfig import ClientConfig
from temporalio.runtime import Runtime
from temporalio.service import TLSConfig

from shared.payload_codec import (
    EncryptionCodec,
    PayloadKeyError,
    PayloadKeys,
    ensure_key_file,
    parse_keys,
)
from shared.settings import ConfigurationError, Settings
from shared.tracing import temporal_interceptors

KEYS_ENV = "ESTEIRA_PAYLOAD_CODEC__KEYS"


def payload_keys(settings: Settings, *, generate: bool = True) -> PayloadKeys | None:
    """The payload keys: `PayloadCodec:Keys`, else the key file; None when encryption is off.

    In Development a missing key file is generated (mode 0600, like the API key); elsewhere a
    missing key stops the process, since encrypting nothing must be a decision.
    """
    codec = settings.payload_codec
    if not codec.enabled:
        return None
    try:
        if codec.keys is not None and codec.keys.get_secret_value().strip():
            return parse_keys(codec.keys.get_secret_value(), source=KEYS_ENV)
        path = settings.payload_key_file
        if generate and settings.environment == "Development":
            ensure_key_file(path)
        if path.is_file():
            return parse_keys(path.read_text(), source=str(path))
    except PayloadKeyError as exc:
        raise ConfigurationError(f"Invalid configuration: {exc}") from None
    if not generate:
        return None
    raise ConfigurationError(
        f"Invalid configuration: {KEYS_ENV} is required when ESTEIRA_ENVIRONMENT="
        f"{settings.environment} (Temporal payloads hold CPFs, accounts and amounts); set "
        "it to `id:base64key` (32 random bytes), or set ESTEIRA_PAYLOAD_CODEC__ENABLED=false "
        "to store payloads in clear on purpose.")


def data_converter(settings: Settings) -> DataConverter:
    """Pydantic payloads, sealed by the payload codec when encryption is on.

    Failure messages and stack traces go through the codec too (encoded attributes): an
    error text may quote a document number or an account.
    """
    keys = payload_keys(settings)
    if keys is None:
        return pydantic_data_converter
    return dataclasses.replace(
        pydantic_data_converter, payload_codec=EncryptionCodec(keys),
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes)


def tls_config(settings: Settings) -> TLSConfig | bool:
    """TLS from `TEMPORAL_TLS*`; False for the embedded dev server."""
    temporal = settings.temporal
    paths = (temporal.tls_client_cert_path, temporal.tls_client_key_path,
             temporal.tls_server_ca_cert_path)
    if not temporal.tls and not any(paths):
        return False
    return TLSConfig(
        client_cert=temporal.tls_client_cert_path.read_bytes()
        if temporal.tls_client_cert_path else None,
        client_private_key=temporal.tls_client_key_path.read_bytes()
        if temporal.tls_client_key_path else None,
        server_root_ca_cert=temporal.tls_server_ca_cert_path.read_bytes()
        if temporal.tls_server_ca_cert_path else None,
        domain=temporal.tls_server_name,
    )


async def connect(settings: Settings, *, runtime: Runtime | None = None) -> Client:
    """Connect to the configured Temporal namespace.

    Temporal's own client configuration comes first (`temporalio.envconfig`: the
    TEMPORAL_CONFIG_FILE / TEMPORAL_PROFILE file and the TEMPORAL_* variables, API key
    included, as Temporal Cloud needs); what the settings name explicitly wins over it.
    """
    # Typed loosely: envconfig's TypedDict is widened with our own keys below.
    config: dict[str, Any] = dict(ClientConfig.load_client_connect_config())
    temporal = settings.temporal
    config["target_host"] = temporal.address or config.get("target_host") \
        or settings.temporal_address
    if "namespace" in temporal.model_fields_set or "namespace" not in config:
        config["namespace"] = temporal.namespace
    if temporal.api_key is not None:
        config["api_key"] = temporal.api_key.get_secret_value()
    tls = tls_config(settings)
    if tls or "tls" not in config:
        # An API key without TLS settings still needs TLS (Temporal Cloud refuses plaintext).
        config["tls"] = tls or "api_key" in config
    return await Client.connect(**config, data_converter=data_converter(settings),
                                interceptors=temporal_interceptors(settings), runtime=runtime)


class TemporalHandle:
    """This process's one Temporal client, connected on the first call that needs it.

    Doors start before Temporal answers (readiness says so), so nothing connects at build
    time; every face and probe of the process awaits the same handle.
    """

    def __init__(self, connector: Callable[[], Awaitable[Client]]) -> None:
        self._connector = connector
        self._client: Client | None = None
        self._lock = asyncio.Lock()

    @classmethod
    def for_settings(cls, settings: Settings, *, runtime: Runtime | None = None
                     ) -> TemporalHandle:
        """A handle that connects to the configured namespace."""
        return cls(lambda: connect(settings, runtime=runtime))

    @classmethod
    def of(cls, client: Client) -> TemporalHandle:
        """A handle on a client connected elsewhere (the worker's own, a test's)."""
        async def given() -> Client:
            return client

        return cls(given)

    async def __call__(self) -> Client:
        """The client, connected once; a failed connect is tried again on the next call."""
        if self._client is not None:
            return self._client
        async with self._lock:
            if self._client is None:
                self._client = await self._connector()
            return self._client
