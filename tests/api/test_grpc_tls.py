"""gRPC over TLS with real certificates: server-only TLS, mutual TLS, plaintext refused."""

from __future__ import annotations

import datetime as dt
import ipaddress
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.composition import compose
from services.grpc_server.main import build_server
from services.grpc_server.tls import add_port
from shared.db.engine import create_engine, session_factory
from shared.settings import ConfigurationError, GrpcSettings, Settings, load_settings
from shared.temporal import TemporalHandle

API_KEY = "test-api-key-0123456789"
# Far below the test timeout: a refused handshake must answer, not hang.
DEADLINE = 5


@dataclass(frozen=True)
class Issued:
    """A certificate and its key, as PEM."""

    cert: bytes
    key: bytes


def _issue(name: str, issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None = None,
           *, ca: bool = False, server: bool = False) -> tuple[Issued, x509.Name,
                                                              ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    issuer_name, issuer_key = issuer or (subject, key)
    now = dt.datetime.now(dt.UTC)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - dt.timedelta(minutes=5))
               .not_valid_after(now + dt.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False).add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    elif not ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    cert = builder.sign(issuer_key, hashes.SHA256())
    pem_key = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    return Issued(cert.public_bytes(serialization.Encoding.PEM), pem_key), subject, key


@dataclass(frozen=True)
class Pki:
    """A CA, a server and a client it issued, and a client from a CA nobody trusts."""

    ca: Issued
    server: Issued
    client: Issued
    stranger: Issued
    directory: Path

    def write(self, name: str, data: bytes) -> Path:
        path = self.directory / name
        path.write_bytes(data)
        return path


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    ca, ca_name, ca_key = _issue("Esteira test CA", ca=True)
    server, _, _ = _issue("localhost", (ca_name, ca_key), server=True)
    client, _, _ = _issue("automation", (ca_name, ca_key))
    _, other_name, other_key = _issue("Someone else's CA", ca=True)
    stranger, _, _ = _issue("stranger", (other_name, other_key))
    return Pki(ca, server, client, stranger, tmp_path_factory.mktemp("pki"))


def _tls_settings(pki: Pki, *, mutual: bool) -> GrpcSettings:
    return GrpcSettings(
        tls_cert_file=pki.write("server.pem", pki.server.cert),
        tls_key_file=pki.write("server.key", pki.server.key),
        tls_client_ca_file=pki.write("client-ca.pem", pki.ca.cert) if mutual else None)


@pytest_asyncio.fixture
async def serve(tmp_path) -> AsyncIterator:
    """Start the real server (every service registered) with the given gRPC settings."""
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'unused.db'}")
    started: list[grpc.aio.Server] = []

    async def temporal():
        raise AssertionError("health needs no Temporal")

    async def start(grpc_settings: GrpcSettings) -> str:
        settings = Settings(data_dir=tmp_path / "data", api_key=API_KEY, grpc=grpc_settings)
        built = build_server(settings, compose(settings, session_factory(engine),
                                               TemporalHandle(temporal)), API_KEY)
        port = add_port(built.server, "127.0.0.1:0", settings.grpc)
        await built.start()
        started.append(built.server)
        return f"127.0.0.1:{port}"

    yield start
    for server in started:
        await server.stop(0)
    await engine.dispose()


async def _health(channel: grpc.aio.Channel) -> int:
    answer = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(), timeout=DEADLINE)
    return answer.status


async def _refused(channel: grpc.aio.Channel) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _health(channel)
    return caught.value.code()


def _tls(pki: Pki, client: Issued | None = None) -> grpc.ChannelCredentials:
    return grpc.ssl_channel_credentials(
        root_certificates=pki.ca.cert, private_key=client.key if client else None,
        certificate_chain=client.cert if client else None)


async def test_tls_serves_a_tls_client_and_refuses_plaintext(pki, serve):
    address = await serve(_tls_settings(pki, mutual=False))
    async with grpc.aio.secure_channel(address, _tls(pki)) as channel:
        assert await _health(channel) == health_pb2.HealthCheckResponse.SERVING
    async with grpc.aio.insecure_channel(address) as channel:
        assert await _refused(channel) == grpc.StatusCode.UNAVAILABLE
    # A client that doesn't trust the server's CA doesn't talk to it either.
    untrusted = grpc.ssl_channel_credentials(root_certificates=pki.stranger.cert)
    async with grpc.aio.secure_channel(address, untrusted) as channel:
        assert await _refused(channel) == grpc.StatusCode.UNAVAILABLE


async def test_a_client_ca_requires_a_client_certificate_it_issued(pki, serve):
    address = await serve(_tls_settings(pki, mutual=True))
    async with grpc.aio.secure_channel(address, _tls(pki, pki.client)) as channel:
        assert await _health(channel) == health_pb2.HealthCheckResponse.SERVING
    for credentials in (_tls(pki), _tls(pki, pki.stranger)):
        async with grpc.aio.secure_channel(address, credentials) as channel:
            assert await _refused(channel) == grpc.StatusCode.UNAVAILABLE
    async with grpc.aio.insecure_channel(address) as channel:
        assert await _refused(channel) == grpc.StatusCode.UNAVAILABLE


async def test_without_tls_settings_it_serves_plaintext(serve):
    address = await serve(GrpcSettings())
    async with grpc.aio.insecure_channel(address) as channel:
        assert await _health(channel) == health_pb2.HealthCheckResponse.SERVING


@pytest.mark.parametrize(("variable", "named"), [
    ("ESTEIRA_GRPC__TLS_CERT_FILE", "ESTEIRA_GRPC__TLS_KEY_FILE"),
    ("ESTEIRA_GRPC__TLS_KEY_FILE", "ESTEIRA_GRPC__TLS_CERT_FILE"),
    ("ESTEIRA_GRPC__TLS_CLIENT_CA_FILE", "ESTEIRA_GRPC__TLS_CERT_FILE"),
])
def test_incomplete_tls_settings_are_refused_naming_the_setting(tmp_path, monkeypatch,
                                                                variable, named):
    monkeypatch.setenv(variable, "/etc/esteira/grpc.pem")
    with pytest.raises(ConfigurationError, match=named):
        load_settings(data_dir=tmp_path)


async def test_an_unreadable_certificate_file_is_a_configuration_error(tmp_path):
    missing = GrpcSettings(tls_cert_file=tmp_path / "nope.pem", tls_key_file=tmp_path / "k")
    # An aio server needs a running loop; a sync test only had one when an earlier test left it.
    server = grpc.aio.server()
    with pytest.raises(ConfigurationError, match="ESTEIRA_GRPC__TLS_KEY_FILE"):
        add_port(server, "127.0.0.1:0", missing)
