"""The gRPC server's listening port: TLS (mutual when a client CA is set) or plaintext."""

from __future__ import annotations

import ipaddress
import logging
from pathlib import Path

import grpc

from shared.settings import ConfigurationError, GrpcSettings

log = logging.getLogger("esteira.grpc")


def server_credentials(settings: GrpcSettings) -> grpc.ServerCredentials | None:
    """TLS credentials from the configured PEM files; None when TLS isn't configured."""
    if settings.tls_cert_file is None or settings.tls_key_file is None:
        return None
    key = _read("ESTEIRA_GRPC__TLS_KEY_FILE", settings.tls_key_file)
    chain = _read("ESTEIRA_GRPC__TLS_CERT_FILE", settings.tls_cert_file)
    client_ca = (None if settings.tls_client_ca_file is None
                 else _read("ESTEIRA_GRPC__TLS_CLIENT_CA_FILE", settings.tls_client_ca_file))
    return grpc.ssl_server_credentials([(key, chain)], root_certificates=client_ca,
                                       require_client_auth=client_ca is not None)


def add_port(server: grpc.aio.Server, address: str, settings: GrpcSettings) -> int:
    """Listen on `address` with TLS when configured, else plaintext; the bound port."""
    credentials = server_credentials(settings)
    if credentials is not None:
        return server.add_secure_port(address, credentials)
    if not _loopback(address):
        # The API key then crosses the network in the clear.
        log.warning("gRPC serves plaintext on %s: set ESTEIRA_GRPC__TLS_CERT_FILE and "
                    "ESTEIRA_GRPC__TLS_KEY_FILE, or keep it behind a TLS proxy", address)
    return server.add_insecure_port(address)


def _read(setting: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"{setting}: can't read {path}: {exc.strerror}") from None


def _loopback(address: str) -> bool:
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
