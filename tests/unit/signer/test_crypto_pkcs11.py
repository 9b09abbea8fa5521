"""PKCS#11 signing through SoftHSM2, selecting the key by certificate SHA-1 thumbprint."""

import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from activities.signer.crypto import cades, pades
from activities.signer.crypto.certs import generate_dev_ca, issue_dev_signer, sha1_thumbprint
from activities.signer.crypto.errors import ErrorCode, SignerCryptoError
from activities.signer.crypto.verify import verify_cades, verify_pades

from .support import need_tool, run_tool

pkcs11 = pytest.importorskip("pkcs11", reason="python-pkcs11 not installed (pyHanko[pkcs11])")
from activities.signer.crypto.pkcs11_token import load_pkcs11_signer  # noqa: E402

SOFTHSM_MODULES = [
    "/usr/lib/softhsm/libsofthsm2.so",
    "/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
]
PIN = "123456"
TOKEN = "esteira-test"


def _import_key(dev_cert, key_id: bytes, label: str, tmp: Path) -> None:
    key_pem = tmp / f"{label}.key"
    key_pem.write_bytes(
        dev_cert.private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    result = run_tool(
        "softhsm2-util", "--import", key_pem, "--token", TOKEN,
        "--label", label, "--id", key_id.hex(), "--pin", PIN,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr


def _store_cert(session, dev_cert, key_id: bytes, label: str) -> None:
    cert = dev_cert.certificate
    session.create_object(
        {
            pkcs11.Attribute.CLASS: pkcs11.ObjectClass.CERTIFICATE,
            pkcs11.Attribute.CERTIFICATE_TYPE: pkcs11.CertificateType.X_509,
            pkcs11.Attribute.TOKEN: True,
            pkcs11.Attribute.LABEL: label,
            pkcs11.Attribute.ID: key_id,
            pkcs11.Attribute.VALUE: cert.public_bytes(serialization.Encoding.DER),
            pkcs11.Attribute.SUBJECT: cert.subject.public_bytes(),
        }
    )


@pytest.fixture(scope="module")
def token(tmp_path_factory):
    """A SoftHSM2 token holding two signers issued by one dev CA."""
    need_tool("softhsm2-util", "softhsm2")
    module = next((m for m in SOFTHSM_MODULES if Path(m).exists()), None)
    if module is None:
        pytest.skip("libsofthsm2.so not found (apt-get install softhsm2)")
    tmp = tmp_path_factory.mktemp("softhsm")
    (tmp / "tokens").mkdir()
    conf = tmp / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {tmp / 'tokens'}\nobjectstore.backend = file\n")
    with pytest.MonkeyPatch.context() as mp:
        # SoftHSM reads this when the module is first loaded in the process.
        mp.setenv("SOFTHSM2_CONF", str(conf))
        init = run_tool(
            "softhsm2-util", "--init-token", "--free", "--label", TOKEN,
            "--pin", PIN, "--so-pin", "654321",
        )  # fmt: skip
        assert init.returncode == 0, init.stderr
        ca = generate_dev_ca()
        first, second = (
            issue_dev_signer(ca, "Token Signer A"),
            issue_dev_signer(ca, "Token Signer B"),
        )
        signers = [(first, b"\x0a", "signer-a"), (second, b"\x0b", "signer-b")]
        # Keys go in through softhsm2-util before this process loads the module: SoftHSM
        # does not rescan objects another process adds later.
        for dev_cert, key_id, label in signers:
            _import_key(dev_cert, key_id, label, tmp)
        lib = pkcs11.lib(module)
        with lib.get_token(token_label=TOKEN).open(rw=True, user_pin=PIN) as session:
            for dev_cert, key_id, label in signers:
                _store_cert(session, dev_cert, key_id, label)
        yield module, ca.certificate, first.certificate, second.certificate
    os.environ.pop("SOFTHSM2_CONF", None)


@pytest.fixture
def open_signers():
    """Closes every token signer a test opened, so logins never leak between tests."""
    opened = []
    yield opened
    for signer in opened:
        signer.close()


def test_selects_key_by_thumbprint_and_signs(token, open_signers, sample_pdf):
    module, ca, _, second = token
    thumb = sha1_thumbprint(second).lower()  # case and separators must not matter
    signer = load_pkcs11_signer(module, ":".join(thumb[i : i + 2] for i in range(0, 40, 2)), PIN)
    open_signers.append(signer)
    assert signer.certificate == second

    pdf = pades.sign_pades(sample_pdf, signer)
    result = verify_pades(pdf, trust_roots=[ca])
    assert result.ok and "Token Signer B" in result.signer_subject
    assert verify_cades(cades.sign_cades(b"rem", signer), b"rem", trust_roots=[ca]).ok


def test_unknown_thumbprint_is_not_found(token):
    with pytest.raises(SignerCryptoError) as err:
        load_pkcs11_signer(token[0], "AB" * 20, PIN)
    assert err.value.code is ErrorCode.CERTIFICATE_NOT_FOUND


def test_wrong_pin_is_refused(token):
    with pytest.raises(SignerCryptoError) as err:
        load_pkcs11_signer(token[0], sha1_thumbprint(token[2]), "000000")
    assert err.value.code is ErrorCode.CERTIFICATE_LOAD_FAILED
