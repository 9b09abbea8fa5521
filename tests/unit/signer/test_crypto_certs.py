"""Dev certificates, PFX loading, thumbprints and the load-once signer."""

import pyhanko.sign.attributes as pyhanko_attributes
import pyhanko.sign.signers.pdf_cms as pyhanko_pdf_cms
import pytest
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from activities.signer.crypto import cades, certs, pades
from activities.signer.crypto import signer as signer_module
from activities.signer.crypto.errors import ErrorCode, SignerCryptoError
from activities.signer.crypto.signer import load_pfx_signer

from .support import PFX_PASSWORD, need_tool, run_tool


def test_dev_ca_is_marked_not_for_production(ca_cert):
    org = ca_cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value
    assert "DEV" in org and "NOT FOR PRODUCTION" in org


def test_signer_chains_to_ca_per_openssl(dev_bundle):
    openssl = need_tool("openssl", "openssl")
    result = run_tool(openssl, "verify", "-CAfile", dev_bundle.ca_pem, dev_bundle.signer_pem)
    assert result.returncode == 0, result.stdout + result.stderr


def test_thumbprint_matches_openssl(dev_bundle, signer):
    openssl = need_tool("openssl", "openssl")
    out = run_tool(openssl, "x509", "-in", dev_bundle.signer_pem, "-noout", "-fingerprint", "-sha1")
    assert out.stdout.strip().split("=", 1)[1].replace(":", "") == signer.thumbprint


def test_normalize_thumbprint_accepts_pasted_forms():
    assert certs.normalize_thumbprint("ab:cd ef") == "ABCDEF"


def test_pfx_is_password_protected_per_openssl(dev_bundle):
    openssl = need_tool("openssl", "openssl")
    good = run_tool(
        openssl, "pkcs12", "-in", dev_bundle.pfx, "-noout", "-passin", f"pass:{PFX_PASSWORD}"
    )
    bad = run_tool(openssl, "pkcs12", "-in", dev_bundle.pfx, "-noout", "-passin", "pass:wrong")
    assert good.returncode == 0, good.stderr
    assert bad.returncode != 0


def test_wrong_pfx_password_raises_stable_code(dev_bundle):
    with pytest.raises(SignerCryptoError) as err:
        load_pfx_signer(dev_bundle.pfx, "wrong")
    assert err.value.code is ErrorCode.CERTIFICATE_LOAD_FAILED


def test_pfx_loaded_once_for_many_signatures(dev_bundle, sample_pdf, monkeypatch):
    pfx_opens, key_parses, scv2_builds = [], [], []
    real_open = pkcs12.load_key_and_certificates
    real_parse = pyhanko_pdf_cms.serialization.load_der_private_key
    real_scv2 = signer_module.as_signing_certificate_v2

    def count(log, real):
        return lambda *a, **k: log.append(1) or real(*a, **k)

    monkeypatch.setattr(pkcs12, "load_key_and_certificates", count(pfx_opens, real_open))
    monkeypatch.setattr(
        pyhanko_pdf_cms.serialization, "load_der_private_key", count(key_parses, real_parse)
    )
    monkeypatch.setattr(signer_module, "as_signing_certificate_v2", count(scv2_builds, real_scv2))
    monkeypatch.setattr(
        pyhanko_attributes, "as_signing_certificate_v2", count(scv2_builds, real_scv2)
    )

    loaded = load_pfx_signer(dev_bundle.pfx, PFX_PASSWORD)
    for _ in range(3):
        pades.sign_pades(sample_pdf, loaded)
        cades.sign_cades(b"remessa", loaded)

    assert len(pfx_opens) == 1
    assert key_parses == [], "the private key was re-parsed per signature"
    assert len(scv2_builds) == 1, "signing-certificate-v2 was rebuilt per signature"
