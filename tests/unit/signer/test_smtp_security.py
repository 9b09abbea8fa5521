"""Approval mail over STARTTLS or SMTPS with AUTH, against aiosmtpd with TLS and auth on."""

from __future__ import annotations

import datetime as dt
import ipaddress
import smtplib
import ssl
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from activities.signer.approvals.mail import OutboxDrain, SmtpTarget
from activities.signer.approvals.wiring import smtp_target
from activities.signer.models.approvals import NotificationOutbox
from activities.signer.models.jobs import Job
from shared.db.engine import create_engine, session_factory
from shared.settings import Settings
from tests.support.ports import free_ports

HOST = "127.0.0.1"
USER, PASSWORD = "esteira", "relay-password-123"


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate for 127.0.0.1 it issued: (ca, cert, key) PEM files."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test relay CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - dt.timedelta(minutes=1))
          .not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)]))
            .issuer_name(ca_name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address(HOST))]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = folder / "ca.pem", folder / "relay.pem", folder / "relay.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[bytes] = []

    async def handle_DATA(self, _server, _session, envelope):
        self.messages.append(envelope.content)
        return "250 OK"


def _authenticate(_server, _session, _envelope, _mechanism, data) -> AuthResult:
    ok = isinstance(data, LoginPassword) and (data.login, data.password) == (
        USER.encode(), PASSWORD.encode())
    return AuthResult(success=ok, handled=False)


@pytest.fixture
def certs(tmp_path) -> tuple[Path, Path, Path]:
    return _certificates(tmp_path)


def _server_context(certs) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(certs[1], certs[2])
    return context


@pytest.fixture
def starttls_relay(certs) -> Iterator[tuple[int, _Inbox]]:
    """A submission relay (587-style): STARTTLS required, AUTH required, AUTH only over TLS."""
    inbox = _Inbox()
    [port] = free_ports(1)
    controller = Controller(inbox, hostname=HOST, port=port,
                            tls_context=_server_context(certs), require_starttls=True,
                            auth_required=True, auth_require_tls=True,
                            authenticator=_authenticate)
    controller.start()
    try:
        yield port, inbox
    finally:
        controller.stop()


@pytest.fixture
def smtps_relay(certs) -> Iterator[tuple[int, _Inbox]]:
    """An SMTPS relay (465-style): TLS from the first byte, AUTH required."""
    inbox = _Inbox()
    [port] = free_ports(1)
    # aiosmtpd can't tell that an implicit-TLS transport is TLS (it tracks only STARTTLS):
    # its AUTH-over-TLS-only rule would hide AUTH here, so it is off; the whole session is TLS.
    controller = Controller(inbox, hostname=HOST, port=port, ssl_context=_server_context(certs),
                            auth_required=True, auth_require_tls=False,
                            authenticator=_authenticate, server_hostname=HOST)
    controller.start()
    try:
        yield port, inbox
    finally:
        controller.stop()


def _send(target: SmtpTarget) -> None:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = target.sender, "ana@example", "Hi"
    message.set_content("Approval needed")
    with target.connect() as client:
        client.send_message(message)


def _target(tmp_path, certs, port: int, security: str, **auth) -> SmtpTarget:
    settings = Settings(data_dir=tmp_path, notifications={
        "smtp_host": HOST, "smtp_port": port, "smtp_security": security,
        "smtp_ca_file": str(certs[0]), **auth})
    return smtp_target(settings)


def test_starttls_with_auth_delivers(tmp_path, certs, starttls_relay):
    port, inbox = starttls_relay
    _send(_target(tmp_path, certs, port, "starttls", smtp_username=USER,
                  smtp_password=PASSWORD))
    assert len(inbox.messages) == 1 and b"Approval needed" in inbox.messages[0]


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_smtps_with_auth_delivers(tmp_path, certs, smtps_relay):
    port, inbox = smtps_relay
    _send(_target(tmp_path, certs, port, "tls", smtp_username=USER, smtp_password=PASSWORD))
    assert len(inbox.messages) == 1


def test_a_wrong_password_is_refused(tmp_path, certs, starttls_relay):
    port, inbox = starttls_relay
    with pytest.raises(smtplib.SMTPAuthenticationError):
        _send(_target(tmp_path, certs, port, "starttls", smtp_username=USER,
                      smtp_password="wrong"))
    assert inbox.messages == []


def test_a_relay_requiring_tls_refuses_a_plain_client(tmp_path, certs, starttls_relay):
    port, inbox = starttls_relay
    with pytest.raises(smtplib.SMTPException):
        _send(_target(tmp_path, certs, port, "none"))
    assert inbox.messages == []


def test_a_certificate_we_dont_trust_stops_the_send(tmp_path, certs, starttls_relay):
    port, inbox = starttls_relay
    target = smtp_target(Settings(data_dir=tmp_path, notifications={
        "smtp_host": HOST, "smtp_port": port, "smtp_security": "starttls",
        "smtp_username": USER, "smtp_password": PASSWORD}))  # system roots: not our test CA
    with pytest.raises(ssl.SSLCertVerificationError):
        _send(target)
    assert inbox.messages == []


def test_starttls_never_falls_back_to_clear_text(tmp_path, certs):
    inbox = _Inbox()
    [port] = free_ports(1)
    controller = Controller(inbox, hostname=HOST, port=port)  # offers no STARTTLS
    controller.start()
    try:
        with pytest.raises(smtplib.SMTPNotSupportedError):
            _send(_target(tmp_path, certs, port, "starttls"))
    finally:
        controller.stop()
    assert inbox.messages == []


def test_auth_over_a_clear_connection_is_a_configuration_error(tmp_path):
    with pytest.raises(ValueError, match="SMTP_SECURITY=starttls or tls"):
        Settings(data_dir=tmp_path, notifications={"smtp_username": USER,
                                                   "smtp_password": PASSWORD})


def test_the_password_is_not_in_the_targets_repr(tmp_path, certs):
    target = _target(tmp_path, certs, 2525, "tls", smtp_username=USER, smtp_password=PASSWORD)
    assert PASSWORD not in repr(target)


async def test_the_outbox_drain_sends_through_starttls(tmp_path, certs, starttls_relay,
                                                       settings):
    """The real drain path: a row in the outbox goes out over STARTTLS with AUTH."""
    port, inbox = starttls_relay
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    try:
        async with sessions() as session:
            session.add(Job(id="j1", file_name="f.pdf", original_path="/in/f.pdf",
                            source="watcher", profile_name="default", format="Pades",
                            status="AwaitingApproval", folder="inbox"))
            await session.flush()
            session.add(NotificationOutbox(job_id="j1", to_address="ana@example",
                                           subject="Approval needed", body="Decide, please"))
            await session.commit()
        target = _target(tmp_path, certs, port, "starttls", smtp_username=USER,
                         smtp_password=PASSWORD)
        assert await OutboxDrain(sessions, target).drain("j1") == (1, 0)
    finally:
        await engine.dispose()
    assert len(inbox.messages) == 1 and b"Decide, please" in inbox.messages[0]
