"""CAdES detached signatures, checked by `openssl cms -verify` and our in-process verifier."""

import pytest
from asn1crypto import cms

from activities.signer.crypto import cades, samples
from activities.signer.crypto.errors import ErrorCode, SignerCryptoError
from activities.signer.crypto.verify import verify_cades

from .support import CADES_POLICY, need_tool, run_tool

REMITTANCE = samples.make_remittance()


@pytest.fixture(scope="module")
def p7m(signer) -> bytes:
    return cades.sign_cades(REMITTANCE, signer, policy=CADES_POLICY)


def openssl_verify(tmp_path, ca_pem, signature: bytes, content: bytes):
    openssl = need_tool("openssl", "openssl")
    (tmp_path / "x.p7m").write_bytes(signature)
    (tmp_path / "x.rem").write_bytes(content)
    return run_tool(
        openssl, "cms", "-verify", "-binary", "-inform", "DER",
        "-in", tmp_path / "x.p7m", "-content", tmp_path / "x.rem",
        "-CAfile", ca_pem, "-purpose", "any", "-out", tmp_path / "out.bin",
    )  # fmt: skip


def openssl_print(tmp_path, signature: bytes) -> str:
    openssl = need_tool("openssl", "openssl")
    (tmp_path / "p.p7m").write_bytes(signature)
    return run_tool(
        openssl, "cms", "-cmsout", "-print", "-inform", "DER", "-in", tmp_path / "p.p7m"
    ).stdout


def test_openssl_verifies_detached_signature(tmp_path, dev_bundle, p7m):
    result = openssl_verify(tmp_path, dev_bundle.ca_pem, p7m, REMITTANCE)
    assert result.returncode == 0, result.stderr
    assert "Verification successful" in result.stderr
    assert (tmp_path / "out.bin").read_bytes() == REMITTANCE


def test_openssl_rejects_altered_content(tmp_path, dev_bundle, p7m):
    altered = REMITTANCE.replace(b"0001", b"0009", 1)
    assert openssl_verify(tmp_path, dev_bundle.ca_pem, p7m, altered).returncode != 0


def test_signature_is_detached_der_signed_data(p7m):
    info = cms.ContentInfo.load(p7m)
    assert info["content_type"].native == "signed_data"
    assert info["content"]["encap_content_info"]["content"].native is None


def test_cades_attributes_and_policy_present_per_openssl(tmp_path, p7m):
    printed = openssl_print(tmp_path, p7m)
    assert "id-smime-aa-signingCertificateV2" in printed
    assert "id-smime-aa-ets-sigPolicyId" in printed
    assert CADES_POLICY.uri in printed
    info = cms.ContentInfo.load(p7m)
    attrs = info["content"]["signer_infos"][0]["signed_attrs"]
    spi = next(a for a in attrs if a["type"].native == "signature_policy_identifier")
    policy_id = spi["values"][0].chosen
    assert policy_id["sig_policy_id"].dotted == CADES_POLICY.oid
    assert policy_id["sig_policy_hash"]["digest"].native == CADES_POLICY.hash_value


def test_no_policy_attribute_unless_configured(tmp_path, signer):
    assert "sigPolicyId" not in openssl_print(tmp_path, cades.sign_cades(REMITTANCE, signer))


def test_in_process_verify(p7m, ca_cert, other_ca_cert):
    assert verify_cades(p7m, REMITTANCE, trust_roots=[ca_cert], expected_policy=CADES_POLICY).ok
    untrusted = verify_cades(p7m, REMITTANCE, trust_roots=[other_ca_cert])
    assert untrusted.code is ErrorCode.SIGNATURE_UNTRUSTED
    assert verify_cades(p7m, REMITTANCE, trust_roots=[other_ca_cert], validate_chain=False).ok


def test_in_process_verify_rejects_altered_content(p7m, ca_cert):
    result = verify_cades(p7m, REMITTANCE + b"x", trust_roots=[ca_cert])
    assert result.code is ErrorCode.SIGNATURE_INVALID


def test_in_process_verify_checks_policy(signer, ca_cert):
    plain = cades.sign_cades(REMITTANCE, signer)
    result = verify_cades(plain, REMITTANCE, trust_roots=[ca_cert], expected_policy=CADES_POLICY)
    assert result.code is ErrorCode.SIGNATURE_POLICY_MISMATCH


def test_empty_content_is_refused(signer):
    with pytest.raises(SignerCryptoError) as err:
        cades.sign_cades(b"", signer)
    assert err.value.code is ErrorCode.DOCUMENT_EMPTY


@pytest.mark.parametrize(
    ("signature", "code"),
    [
        (b"", ErrorCode.SIGNATURE_MISSING),
        (b"\x30\x82\x01\x00junk", ErrorCode.DOCUMENT_CORRUPT),
        (b"not der at all", ErrorCode.DOCUMENT_CORRUPT),
    ],
    ids=["empty", "truncated-der", "not-der"],
)
def test_corrupt_signature_has_stable_code(ca_cert, signature, code):
    assert verify_cades(signature, REMITTANCE, trust_roots=[ca_cert]).code is code
