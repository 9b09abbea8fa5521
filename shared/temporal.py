"""The Temporal client every process uses: one connection, the pydantic data converter."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.envconfig import ClientConfig
from temporalio.runtime import Runtime
from temporalio.service import TLSConfig

from shared.settings import Settings


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
    config = dict(ClientConfig.load_client_connect_config())
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
    return await Client.connect(**config, data_converter=pydantic_data_converter,
                                runtime=runtime)
