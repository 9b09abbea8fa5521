"""Per-participant development certificates: each simulated person signs with their own key.

Made by the simulator (a dev CA, then one leaf per CPF, CN `NAME:CPF` as ICP-Brasil e-CPFs
carry it); never for production. The CA is served at `/_sim/ca.pem` and, given a folder, kept
there across restarts, so a KEYLESS profile can trust its file.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
    pkcs12,
)
from cryptography.x509.oid import NameOID

CA_NAME = "Lacuna Signer simulator DEV participants CA (NOT FOR PRODUCTION)"
# Certificates are back-dated a little: a verifier's clock may run behind ours.
SKEW = dt.timedelta(minutes=5)
CA_FILE, CA_KEY_FILE = "lacuna-participants-ca.pem", "lacuna-participants-ca.key"


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "DEV - NOT FOR PRODUCTION")])


def _new_ca() -> tuple[rsa.RSAPrivateKey, x509.Certificate]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder()
            .subject_name(_name(CA_NAME)).issuer_name(_name(CA_NAME))
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - SKEW).not_valid_after(now + dt.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(_usage(ca=True), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    return key, cert


def _load_ca(directory: Path) -> tuple[rsa.RSAPrivateKey, x509.Certificate] | None:
    """The CA an earlier run kept in `directory`; None when there is none yet."""
    cert, key = directory / CA_FILE, directory / CA_KEY_FILE
    if not (cert.exists() and key.exists()):
        return None
    private = load_pem_private_key(key.read_bytes(), password=None)
    if not isinstance(private, rsa.RSAPrivateKey):
        raise ValueError(f"{key} is not an RSA key")
    return private, x509.load_pem_x509_certificate(cert.read_bytes())


def _usage(*, ca: bool) -> x509.KeyUsage:
    # Leaves: digital signature + non-repudiation, which pyHanko's validator asks for.
    return x509.KeyUsage(digital_signature=not ca, content_commitment=not ca,
                         key_encipherment=False, data_encipherment=False, key_agreement=False,
                         key_cert_sign=ca, crl_sign=ca, encipher_only=False,
                         decipher_only=False)


class ParticipantPki:
    """A dev CA and, lazily, one certificate (as a password-less PFX) per participant."""

    def __init__(self, ca_dir: Path | None = None) -> None:
        self._lock = threading.Lock()
        loaded = _load_ca(ca_dir) if ca_dir is not None else None
        self._ca_key, self.ca = loaded or _new_ca()
        self._ca_ski = x509.SubjectKeyIdentifier.from_public_key(self._ca_key.public_key())
        if ca_dir is not None and loaded is None:
            ca_dir.mkdir(parents=True, exist_ok=True)
            # Private from the first byte (simulators stand apart from `shared`).
            fd = os.open(ca_dir / CA_KEY_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(self._ca_key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8,
                                                        NoEncryption()))
            (ca_dir / CA_FILE).write_bytes(self.ca_pem())
        self._pfx: dict[str, bytes] = {}

    def ca_pem(self) -> bytes:
        """The CA a verifier trusts to accept the participants' signatures."""
        return self.ca.public_bytes(Encoding.PEM)

    def pfx_for(self, user: dict[str, Any]) -> bytes:
        """The participant's own PFX (no password), made on first use, by CPF (or e-mail)."""
        who = str(user.get("identifier") or user.get("email") or user.get("name") or "anon")
        with self._lock:
            if who not in self._pfx:
                self._pfx[who] = self._issue(user, who)
            return self._pfx[who]

    def _issue(self, user: dict[str, Any], who: str) -> bytes:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        now = dt.datetime.now(dt.UTC)
        common_name = f"{str(user.get('name') or 'PARTICIPANTE').upper()}:{who}"
        cert = (x509.CertificateBuilder()
                .subject_name(_name(common_name)).issuer_name(self.ca.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - SKEW).not_valid_after(now + dt.timedelta(days=825))
                .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                               critical=True)
                .add_extension(_usage(ca=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                               critical=False)
                .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(
                    self._ca_ski), critical=False)
                .sign(self._ca_key, hashes.SHA256()))
        return pkcs12.serialize_key_and_certificates(
            who.encode(), key, cert, [self.ca], NoEncryption())
