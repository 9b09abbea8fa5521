"""A SoftHSM2 token for tests, built without loading the PKCS#11 module in the test process.

SoftHSM reads `SOFTHSM2_CONF` once, when a process first loads it; building each token in a
spawned process keeps tokens of different tests from shadowing each other.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import subprocess
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from activities.signer.crypto.certs import generate_dev_ca, issue_dev_signer

MODULES = ["/usr/lib/softhsm/libsofthsm2.so", "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so"]
PIN = "123456"
SO_PIN = "654321"
TOKEN_LABEL = "esteira-test"


@dataclass(frozen=True)
class SoftToken:
    """A token directory, its config file, the module, and what it holds."""

    conf: Path
    module: str
    ca: x509.Certificate
    signers: dict[str, x509.Certificate]


def find_module() -> str:
    """libsofthsm2.so, or skip when SoftHSM2 isn't installed (scripts/install-system-deps.sh)."""
    if shutil.which("softhsm2-util") is None:
        pytest.skip("softhsm2-util not installed (apt-get install softhsm2)")
    module = next((m for m in MODULES if Path(m).exists()), None)
    if module is None:
        pytest.skip("libsofthsm2.so not found (apt-get install softhsm2)")
    return module


def build_token(directory: Path, signer_names: list[str]) -> SoftToken:
    """Initialise a token and put one dev-CA-issued key + certificate per name on it."""
    module = find_module()
    (directory / "tokens").mkdir(parents=True)
    conf = directory / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {directory / 'tokens'}\nobjectstore.backend = file\n")
    env = {**os.environ, "SOFTHSM2_CONF": str(conf)}
    _run(env, "--init-token", "--free", "--label", TOKEN_LABEL, "--pin", PIN, "--so-pin", SO_PIN)
    ca = generate_dev_ca()
    signers: dict[str, x509.Certificate] = {}
    objects = []
    for index, name in enumerate(signer_names):
        issued = issue_dev_signer(ca, name)
        key_file = directory / f"key{index}.pem"
        key_file.write_bytes(issued.private_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()))
        key_id = bytes([index + 1])
        # Keys go in through softhsm2-util before anything loads the module.
        _run(env, "--import", str(key_file), "--token", TOKEN_LABEL, "--label", f"k{index}",
             "--id", key_id.hex(), "--pin", PIN)
        key_file.unlink()
        objects.append((key_id, f"k{index}",
                        issued.certificate.public_bytes(serialization.Encoding.DER),
                        issued.certificate.subject.public_bytes()))
        signers[name] = issued.certificate
    previous = os.environ.get("SOFTHSM2_CONF")
    os.environ["SOFTHSM2_CONF"] = str(conf)  # inherited by the spawned process below
    try:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            pool.submit(_store_certificates, module, objects).result(timeout=60)
    finally:
        if previous is None:
            os.environ.pop("SOFTHSM2_CONF", None)
        else:
            os.environ["SOFTHSM2_CONF"] = previous
    return SoftToken(conf=conf, module=module, ca=ca.certificate, signers=signers)


def _run(env: dict[str, str], *args: str) -> None:
    result = subprocess.run(["softhsm2-util", *args], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr


def _store_certificates(module: str, objects: list[tuple[bytes, str, bytes, bytes]]) -> None:
    import pkcs11

    with pkcs11.lib(module).get_token(token_label=TOKEN_LABEL).open(
            rw=True, user_pin=PIN) as session:
        for key_id, label, der, subject in objects:
            session.create_object({
                pkcs11.Attribute.CLASS: pkcs11.ObjectClass.CERTIFICATE,
                pkcs11.Attribute.CERTIFICATE_TYPE: pkcs11.CertificateType.X_509,
                pkcs11.Attribute.TOKEN: True, pkcs11.Attribute.LABEL: label,
                pkcs11.Attribute.ID: key_id, pkcs11.Attribute.VALUE: der,
                pkcs11.Attribute.SUBJECT: subject,
            })
