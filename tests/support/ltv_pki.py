"""A real PKI on loopback for the signature-level tests: certomancer's TSA, OCSP and CRLs.

`certomancer animate` (by pyHanko's author) serves a YAML-described PKI over HTTP: two TSAs, an
OCSP responder and a CRL distribution point for one root CA. The signer certificate expires in
`SIGNER_DAYS` days, so a validation dated after that proves what the embedded evidence proves.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.ports import free_ports

ARCH = "esteira"
PFX_PASSWORD = "ltv-secret"
SIGNER_DAYS = 30
KEYS = ("root", "signer", "tsa", "tsa2", "ocsp")
START_TIMEOUT_SECONDS = 30.0
# Port 1 on loopback: nothing listens, a connection is refused at once.
DEAD_URL = "http://127.0.0.1:1"


def _iso(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S+0000")


def _key_usage(*usages: str) -> dict:
    return {"id": "key_usage", "critical": True,
            "smart-value": {"schema": "key-usage", "params": list(usages)}}


def _revocation_pointers() -> list[dict]:
    return [
        {"id": "crl_distribution_points",
         "smart-value": {"schema": "crl-dist-url", "params": {"crl-repo-names": ["root"]}}},
        {"id": "authority_information_access",
         "smart-value": {"schema": "aia-urls",
                         "params": {"ocsp-responder-names": ["root-ocsp"]}}},
    ]


def certomancer_config(base_url: str, key_dir: Path, *, now: dt.datetime,
                       signer_revoked: bool = False) -> dict:
    """The YAML document certomancer reads: root CA, signer, two TSAs, OCSP and CRL."""
    long = {"valid-from": _iso(now - dt.timedelta(days=365)),
            "valid-to": _iso(now + dt.timedelta(days=3650))}
    signer_cert: dict = {
        "subject": "signer", "issuer": "root",
        "validity": {"valid-from": _iso(now - dt.timedelta(days=1)),
                     "valid-to": _iso(now + dt.timedelta(days=SIGNER_DAYS))},
        "extensions": [_key_usage("digital_signature", "non_repudiation"),
                       *_revocation_pointers()],
    }
    if signer_revoked:
        signer_cert["revocation"] = {"revoked-since": _iso(now - dt.timedelta(hours=1)),
                                     "reason": "key_compromise"}
    # The same signer, but its OCSP responder is a port nothing listens on: CRL fallback.
    crl_only = {**signer_cert, "subject-key": "signer", "extensions": [
        _key_usage("digital_signature", "non_repudiation"), _revocation_pointers()[0],
        {"id": "authority_information_access", "value": [
            {"access_method": "ocsp",
             "access_location": {"uniform_resource_identifier": DEAD_URL + "/ocsp"}}]}]}
    tsa_cert = {"subject": "tsa", "issuer": "root", "validity": long,
                "extensions": [_key_usage("digital_signature", "non_repudiation"),
                               {"id": "extended_key_usage", "critical": True,
                                "value": ["time_stamping"]}, *_revocation_pointers()]}
    return {
        "external-url-prefix": base_url,
        "keysets": {ARCH: {"path-prefix": str(key_dir),
                           "keys": {k: {"path": f"{k}.key.pem"} for k in KEYS}}},
        "pki-architectures": {ARCH: {
            "keyset": ARCH,
            "entity-defaults": {"country-name": "BR", "organization-name": "Esteira LTV Test"},
            "entities": {"root": {"common-name": "LTV Root CA"},
                         "signer": {"common-name": "LTV Signer"},
                         "tsa": {"common-name": "LTV Time Stamping Authority"},
                         "tsa2": {"common-name": "LTV Second TSA"},
                         "ocsp": {"common-name": "LTV OCSP Responder"}},
            "certs": {
                "root": {"subject": "root", "issuer": "root", "validity": long,
                         "extensions": [{"id": "basic_constraints", "critical": True,
                                         "value": {"ca": True}},
                                        _key_usage("digital_signature", "key_cert_sign",
                                                   "crl_sign")]},
                "signer": signer_cert,
                "signer-crl": crl_only,
                "tsa": tsa_cert,
                "tsa2": {**tsa_cert, "subject": "tsa2", "subject-key": "tsa2"},
                "ocsp": {"subject": "ocsp", "issuer": "root", "validity": long,
                         "extensions": [_key_usage("digital_signature"),
                                        {"id": "extended_key_usage", "critical": True,
                                         "value": ["ocsp_signing"]},
                                        {"id": "ocsp_no_check"}]},
            },
            "services": {
                "ocsp": {"root-ocsp": {"for-issuer": "root", "responder-cert": "ocsp",
                                       "signing-key": "ocsp"}},
                "crl-repo": {"root": {"for-issuer": "root", "signing-key": "root",
                                      "simulated-update-schedule": "P7D"}},
                "time-stamping": {"tsa": {"signing-key": "tsa", "signing-cert": "tsa"},
                                  "tsa2": {"signing-key": "tsa2", "signing-cert": "tsa2"}},
            },
        }},
    }


def write_keys(key_dir: Path) -> None:
    """RSA-2048 keys for every entity, unencrypted PEM (a test PKI only)."""
    key_dir.mkdir(parents=True, exist_ok=True)
    for name in KEYS:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (key_dir / f"{name}.key.pem").write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()))


@dataclass
class LtvPki:
    """A running certomancer: its URLs, the signer's PFX and the root to trust."""

    directory: Path
    port: int
    now: dt.datetime
    process: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def config_path(self) -> Path:
        return self.directory / "certomancer.yml"

    def tsa_url(self, label: str = "tsa") -> str:
        return f"{self.base_url}/{ARCH}/tsa/{label}"

    @property
    def ocsp_url(self) -> str:
        return f"{self.base_url}/{ARCH}/ocsp/root-ocsp"

    @property
    def root_pem(self) -> Path:
        return self.directory / "root.pem"

    @property
    def signer_pfx(self) -> Path:
        return self.directory / "signer.pfx"

    @property
    def crl_only_pfx(self) -> Path:
        return self.directory / "signer-crl.pfx"

    def root(self) -> x509.Certificate:
        return x509.load_pem_x509_certificate(self.root_pem.read_bytes())

    def signer_expiry(self) -> dt.datetime:
        pfx = serialization.pkcs12.load_key_and_certificates(
            self.signer_pfx.read_bytes(), PFX_PASSWORD.encode())
        assert pfx[1] is not None
        return pfx[1].not_valid_after_utc

    def configure(self, *, signer_revoked: bool = False) -> None:
        """Write the YAML and export the root and the signer's PFX from it."""
        from certomancer.registry import CertLabel, CertomancerConfig

        config = certomancer_config(self.base_url, self.directory / "keys", now=self.now,
                                    signer_revoked=signer_revoked)
        self.config_path.write_text(yaml.safe_dump(config))
        arch = CertomancerConfig.from_file(str(self.config_path)).get_pki_arch(ARCH)
        self.root_pem.write_bytes(_pem(arch.get_cert(CertLabel("root")).dump()))
        for label, target in (("signer", self.signer_pfx), ("signer-crl", self.crl_only_pfx)):
            target.write_bytes(arch.package_pkcs12(
                CertLabel(label), certs_to_embed=[CertLabel("root")],
                password=PFX_PASSWORD.encode()))

    def start(self) -> None:
        """Run `certomancer animate` on the port; wait until it answers."""
        command = shutil.which("certomancer", path=str(Path(sys.executable).parent))
        assert command, "certomancer is a dev dependency (pip install -e .[dev])"
        self.process = subprocess.Popen(
            [command, "--config", str(self.config_path), "animate", "--aiohttp",
             "--port", str(self.port), "--no-web-ui"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ})
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), timeout=0.5):
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"certomancer exited with {self.process.returncode}")
            time.sleep(0.1)
        raise RuntimeError("certomancer did not start")

    def stop(self) -> None:
        """Stop the responders (the port then refuses connections)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self, *, signer_revoked: bool) -> None:
        """Change the PKI (e.g. revoke the signer) and serve it again on the same port."""
        self.stop()
        self.configure(signer_revoked=signer_revoked)
        self.start()


def _pem(der: bytes) -> bytes:
    return x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)


@contextlib.contextmanager
def running_pki(directory: Path) -> Iterator[LtvPki]:
    """A configured, started PKI; stopped on exit."""
    write_keys(directory / "keys")
    pki = LtvPki(directory, free_ports(1)[0],
                 dt.datetime.now(dt.UTC).replace(microsecond=0))
    pki.configure()
    pki.start()
    try:
        yield pki
    finally:
        pki.stop()
