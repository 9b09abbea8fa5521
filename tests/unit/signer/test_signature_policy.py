"""The ICP-Brasil policy catalogue, the operator's policy document, and what signatures carry."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest
from asn1crypto import cms
from lxml import etree
from pydantic import ValidationError
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.general import find_unique_cms_attribute

from activities.signer.contracts.jobs import SignatureFormat
from activities.signer.crypto import cades, pades, xades
from activities.signer.crypto.policy_catalogue import CATALOGUE, POLICY_NAMES, catalogue_policy
from activities.signer.crypto.policy_document import PolicyDocumentError
from activities.signer.crypto.samples import make_remittance, make_xml
from activities.signer.health import ProfileHealth
from activities.signer.models.jobs import SigningProfile
from activities.signer.profiles import ProfileConfig
from activities.signer.signature_policy import (
    describe_policy,
    policy_for,
    policy_health,
    resolve,
)
from tests.support.policy_documents import write_policy

FORMATS = {"pades": SignatureFormat.PADES, "cades": SignatureFormat.CADES,
           "xades": SignatureFormat.XADES}
XADES_NS = {"xades": "http://uri.etsi.org/01903/v1.3.2#",
            "ds": "http://www.w3.org/2000/09/xmldsig#"}


def _profile(tmp_path: Path, fmt: str, **overrides) -> tuple[SigningProfile, bytes]:
    path, digest, inner = write_policy(tmp_path, catalogue_policy("AD-RB", FORMATS[fmt]))
    values = {"name": f"p-{fmt}", "format": fmt, "policy_name": "AD-RB",
              "policy_document": str(path), "policy_digest": digest, **overrides}
    return SigningProfile(**values), inner


def test_the_catalogue_has_the_current_ad_rb_policy_of_each_format():
    assert POLICY_NAMES == ("AD-RB", "AD-RT")
    entries = {fmt: (e.oid, e.uri) for fmt, e in CATALOGUE["AD-RB"].items()}
    base = "http://politicas.icpbrasil.gov.br/"
    assert entries == {
        SignatureFormat.CADES: ("2.16.76.1.7.1.1.2.4", base + "PA_AD_RB_v2_4.der"),
        SignatureFormat.PADES: ("2.16.76.1.7.1.11.1.3", base + "PA_PAdES_AD_RB_v1_3.der"),
        SignatureFormat.XADES: ("2.16.76.1.7.1.6.2.5", base + "PA_AD_RB_v2_5.xml"),
    }
    with pytest.raises(ValueError, match="not in the catalogue"):
        catalogue_policy("AD-RZ", SignatureFormat.PADES)


def test_the_catalogue_has_ad_rt_beside_ad_rb_for_the_timestamped_formats():
    # DOC-ICP-15.03: AD-RT ("referência de tempo") CAdES v2.4 and PAdES v1.3.
    entries = {fmt: (e.oid, e.uri) for fmt, e in CATALOGUE["AD-RT"].items()}
    base = "http://politicas.icpbrasil.gov.br/"
    assert entries == {
        SignatureFormat.CADES: ("2.16.76.1.7.1.2.2.4", base + "PA_AD_RT_v2_4.der"),
        SignatureFormat.PADES: ("2.16.76.1.7.1.12.1.3", base + "PA_PAdES_AD_RT_v1_3.der"),
    }
    with pytest.raises(ValueError, match="no XAdES entry"):
        catalogue_policy("AD-RT", SignatureFormat.XADES)


@pytest.mark.parametrize("fmt", ["pades", "cades", "xades"])
def test_a_matching_document_gives_its_inner_hash_not_the_file_hash(tmp_path, fmt):
    profile, inner = _profile(tmp_path, fmt)
    policy = resolve(profile, FORMATS[fmt])
    assert (policy.oid, policy.hash_value) == (CATALOGUE["AD-RB"][FORMATS[fmt]].oid, inner)
    assert policy.hash_value.hex() != profile.policy_digest, "the file's SHA-256 is not signed"
    raw = policy_for(profile, FORMATS[fmt])
    assert base64.b64decode(raw["hash_base64"]) == inner and raw["uri"] == policy.uri


def test_a_missing_or_different_document_is_refused_with_the_reason(tmp_path):
    profile, _ = _profile(tmp_path, "cades")
    base64_digest = base64.b64encode(bytes.fromhex(profile.policy_digest)).decode()
    profile.policy_digest = base64_digest  # the LPA's form is accepted too
    assert resolve(profile, SignatureFormat.CADES).oid == "2.16.76.1.7.1.1.2.4"
    profile.policy_digest = "0" * 64
    with pytest.raises(PolicyDocumentError, match="does not match PolicyDigest"):
        resolve(profile, SignatureFormat.CADES)
    profile.policy_document = str(tmp_path / "absent.der")
    with pytest.raises(PolicyDocumentError, match=re.escape("absent.der cannot be read")):
        resolve(profile, SignatureFormat.CADES)
    other = catalogue_policy("AD-RB", SignatureFormat.CADES)
    (tmp_path / "older").mkdir()
    path, digest, _ = write_policy(tmp_path / "older", other, oid="2.16.76.1.7.1.1.2.3")
    profile.policy_document, profile.policy_digest = str(path), digest
    with pytest.raises(PolicyDocumentError, match=re.escape("is policy 2.16.76.1.7.1.1.2.3, not")):
        resolve(profile, SignatureFormat.CADES)


def test_health_is_degraded_with_the_reason_and_untouched_when_the_document_is_right(tmp_path):
    profile, _ = _profile(tmp_path, "xades")
    opened = ProfileHealth(profile.name, True, "pfx opened")
    assert policy_health(opened, profile) is opened
    profile.policy_digest = "ab" * 32
    degraded = policy_health(opened, profile)
    assert not degraded.ok and degraded.detail.startswith("DEGRADED: policy document ")
    assert "does not match PolicyDigest" in degraded.detail
    Path(profile.policy_document).unlink()
    assert "cannot be read" in policy_health(opened, profile).detail


def test_config_names_the_policy_and_refuses_what_a_worker_could_not_honour(tmp_path):
    config = ProfileConfig(name="x", format="pades", policy="AD-RB",
                           policy_document="/p.der", policy_digest="a" * 64)
    assert config.policy_name == "AD-RB" and config.policy is None
    refusals = {
        "fixed format": {"format": "auto"},
        "not in the catalogue": {"policy": "AD-RZ"},
        "needs policy_document": {"policy_digest": None},
        "64 hex digits": {"policy_digest": "not-a-digest"},
        "need a catalogue policy": {"policy": None},
    }
    base = {"name": "x", "format": "pades", "policy": "AD-RB", "policy_document": "/p.der",
            "policy_digest": "a" * 64}
    for message, change in refusals.items():
        with pytest.raises(ValidationError, match=message):
            ProfileConfig(**{**base, **change})


def test_describe_says_none_without_a_policy(tmp_path):
    assert describe_policy(SigningProfile(name="plain")) == "none"
    profile, _ = _profile(tmp_path, "pades")
    assert describe_policy(profile) == "ICP-Brasil AD-RB v1.3 PAdES (2.16.76.1.7.1.11.1.3)"


def test_signatures_of_each_format_carry_the_resolved_oid_and_hash(tmp_path, signer, sample_pdf):
    for fmt in FORMATS:
        (tmp_path / fmt).mkdir()
    pdf_profile, pdf_hash = _profile(tmp_path / "pades", "pades")
    signed = pades.sign_pades(sample_pdf, signer, policy=resolve(pdf_profile,
                                                                 SignatureFormat.PADES))
    [embedded] = PdfFileReader(io.BytesIO(signed)).embedded_signatures
    spi = find_unique_cms_attribute(embedded.signer_info["signed_attrs"],
                                    "signature_policy_identifier").chosen
    assert spi["sig_policy_id"].dotted == "2.16.76.1.7.1.11.1.3"
    assert spi["sig_policy_hash"]["digest"].native == pdf_hash

    cms_profile, cms_hash = _profile(tmp_path / "cades", "cades")
    p7m = cades.sign_cades(make_remittance(), signer,
                           policy=resolve(cms_profile, SignatureFormat.CADES))
    info = cms.ContentInfo.load(p7m)["content"]["signer_infos"][0]
    spi = find_unique_cms_attribute(info["signed_attrs"], "signature_policy_identifier").chosen
    assert spi["sig_policy_id"].dotted == "2.16.76.1.7.1.1.2.4"
    assert spi["sig_policy_hash"]["digest"].native == cms_hash
    assert spi["sig_policy_qualifiers"][0]["sig_qualifier"].native.endswith("PA_AD_RB_v2_4.der")

    xml_profile, xml_hash = _profile(tmp_path / "xades", "xades")
    signed_xml = xades.sign_xades(make_xml(), signer,
                                  policy=resolve(xml_profile, SignatureFormat.XADES))
    spid = etree.fromstring(signed_xml).find(".//xades:SignaturePolicyId", XADES_NS)
    assert spid.findtext("xades:SigPolicyId/xades:Identifier", namespaces=XADES_NS) == \
        "urn:oid:2.16.76.1.7.1.6.2.5"
    digest = spid.findtext("xades:SigPolicyHash/ds:DigestValue", namespaces=XADES_NS)
    assert base64.b64decode(digest) == xml_hash
