"""PKCS#11 signing through SoftHSM2, selecting the key by certificate SHA-1 thumbprint."""

import pytest

from activities.signer.crypto import cades, pades
from activities.signer.crypto.certs import sha1_thumbprint
from activities.signer.crypto.errors import ErrorCode, SignerCryptoError
from activities.signer.crypto.verify import verify_cades, verify_pades
from tests.support.softhsm import PIN, build_token

pkcs11 = pytest.importorskip("pkcs11", reason="python-pkcs11 not installed (pyHanko[pkcs11])")
from activities.signer.crypto.pkcs11_token import load_pkcs11_signer  # noqa: E402


@pytest.fixture(scope="module")
def token(tmp_path_factory):
    """A SoftHSM2 token holding two signers issued by one dev CA."""
    built = build_token(tmp_path_factory.mktemp("softhsm"), ["Token Signer A", "Token Signer B"])
    with pytest.MonkeyPatch.context() as mp:
        # SoftHSM reads this when the module is first loaded in the process.
        mp.setenv("SOFTHSM2_CONF", str(built.conf))
        yield (built.module, built.ca, built.signers["Token Signer A"],
               built.signers["Token Signer B"])


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
