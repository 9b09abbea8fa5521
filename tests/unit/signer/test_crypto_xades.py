"""XAdES enveloped signatures, checked by xmlsec1 and by signxml in process."""

from base64 import b64decode

import pytest
from lxml import etree

from activities.signer.crypto import samples, xades
from activities.signer.crypto.certs import write_dev_bundle
from activities.signer.crypto.errors import ErrorCode, SignerCryptoError
from activities.signer.crypto.verify import verify_xades

from .support import XADES_POLICY, need_tool, run_tool

NS = {
    "ds": "http://www.w3.org/2000/09/xmldsig#",
    "xades": "http://uri.etsi.org/01903/v1.3.2#",
}
DOCUMENT = samples.make_xml()


@pytest.fixture(scope="module")
def signed_xml(signer) -> bytes:
    return xades.sign_xades(DOCUMENT, signer, policy=XADES_POLICY)


def xmlsec_verify(tmp_path, ca_pem, xml: bytes):
    xmlsec1 = need_tool("xmlsec1", "xmlsec1")
    path = tmp_path / "signed.xml"
    path.write_bytes(xml)
    return run_tool(xmlsec1, "--verify", "--trusted-pem", ca_pem, path)


def test_xmlsec1_verifies_signature(tmp_path, dev_bundle, signed_xml):
    result = xmlsec_verify(tmp_path, dev_bundle.ca_pem, signed_xml)
    assert result.returncode == 0, result.stderr
    assert "SignedInfo References (ok/all): 3/3" in result.stderr


def test_xmlsec1_checks_chain_not_a_bare_key(tmp_path, signed_xml):
    # With a KeyValue in KeyInfo, xmlsec1 would verify against it and ignore the chain.
    other = write_dev_bundle(tmp_path / "other", "x")
    assert b"KeyValue" not in signed_xml
    assert xmlsec_verify(tmp_path, other.ca_pem, signed_xml).returncode != 0


@pytest.mark.parametrize(
    ("old", "new"),
    [(b"SKU-00003", b"SKU-99999"), (b"<xades:SigningTime>20", b"<xades:SigningTime>19")],
    ids=["content", "signed-properties"],
)
def test_tampering_fails_both_verifiers(tmp_path, dev_bundle, ca_cert, signed_xml, old, new):
    assert old in signed_xml
    tampered = signed_xml.replace(old, new, 1)
    assert xmlsec_verify(tmp_path, dev_bundle.ca_pem, tampered).returncode != 0
    assert verify_xades(tampered, trust_roots=[ca_cert]).code is ErrorCode.SIGNATURE_INVALID


def test_signature_is_enveloped_in_root(signed_xml):
    root = etree.fromstring(signed_xml)
    assert root.tag == "{urn:esteira:sample}lote"
    assert root[-1].tag == f"{{{NS['ds']}}}Signature"


def test_policy_identifier_is_signed_with_oid_hash_and_uri(signed_xml):
    root = etree.fromstring(signed_xml)
    spid = root.find(".//xades:SignedProperties//xades:SignaturePolicyId", NS)
    identifier = spid.find("xades:SigPolicyId/xades:Identifier", NS)
    assert identifier.text == f"urn:oid:{XADES_POLICY.oid}"
    assert identifier.get("Qualifier") == "OIDAsURN"
    digest = spid.find("xades:SigPolicyHash/ds:DigestValue", NS).text
    assert b64decode(digest) == XADES_POLICY.hash_value
    assert spid.findtext(".//xades:SPURI", namespaces=NS) == XADES_POLICY.uri


def test_no_policy_unless_configured(signer):
    root = etree.fromstring(xades.sign_xades(DOCUMENT, signer))
    assert root.find(".//xades:SignaturePolicyIdentifier", NS) is None


def test_in_process_verify(signed_xml, ca_cert, other_ca_cert):
    ok = verify_xades(signed_xml, trust_roots=[ca_cert], expected_policy=XADES_POLICY)
    assert ok.ok, ok.reason
    untrusted = verify_xades(signed_xml, trust_roots=[other_ca_cert])
    assert untrusted.code is ErrorCode.SIGNATURE_UNTRUSTED
    assert verify_xades(signed_xml, trust_roots=[other_ca_cert], validate_chain=False).ok


def test_in_process_verify_checks_policy(signer, ca_cert):
    plain = xades.sign_xades(DOCUMENT, signer)
    result = verify_xades(plain, trust_roots=[ca_cert], expected_policy=XADES_POLICY)
    assert result.code is ErrorCode.SIGNATURE_POLICY_MISMATCH


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", ErrorCode.DOCUMENT_EMPTY),
        (b"%PDF-1.7 not xml", ErrorCode.DOCUMENT_CORRUPT),
        (b"<a><b></a>", ErrorCode.DOCUMENT_CORRUPT),
    ],
    ids=["empty", "not-xml", "mismatched-tags"],
)
def test_bad_input_raises_stable_code(signer, ca_cert, data, code):
    with pytest.raises(SignerCryptoError) as err:
        xades.sign_xades(data, signer)
    assert err.value.code is code
    assert verify_xades(data, trust_roots=[ca_cert]).code is code


def test_doctype_is_refused_so_entities_never_expand(signer, ca_cert, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    xxe = (
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]><r>&x;</r>'
    ).encode()
    with pytest.raises(SignerCryptoError) as err:
        xades.sign_xades(xxe, signer)
    assert err.value.code is ErrorCode.DOCUMENT_UNSUPPORTED
    assert verify_xades(xxe, trust_roots=[ca_cert]).code is ErrorCode.DOCUMENT_UNSUPPORTED


def test_unsigned_xml_reports_missing_signature(ca_cert):
    assert verify_xades(DOCUMENT, trust_roots=[ca_cert]).code is ErrorCode.SIGNATURE_MISSING
