"""The Temporal client every process uses: one connection, the pydantic data converter."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter
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
    """Connect to the configured Temporal namespace."""
    return await Client.connect(
        settings.temporal_address,
        namespace=settings.temporal.namespace,
        tls=tls_config(settings),
        data_converter=pydantic_data_converter,
        runtime=runtime,
    )
