"""The Lacuna simulator's participants sign with pyHanko / signxml, and our verifier agrees."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509

from activities.signer.crypto.samples import make_pdf, make_xml
from activities.signer.crypto.verify import verify_cades, verify_pades, verify_xades
from services.simulators.lacuna.participants import sign_version
from services.simulators.lacuna.settings import LacunaSimSettings
from services.simulators.lacuna.state import SignerApiError


@pytest.fixture
def sim_settings(dev_pki: Path) -> LacunaSimSettings:
    return LacunaSimSettings(pfx_path=str(dev_pki / "signer.pfx"),
                             pfx_password_file=str(dev_pki / "signer.password"))


@pytest.fixture
def roots(dev_pki: Path) -> list[x509.Certificate]:
    return [x509.load_pem_x509_certificate((dev_pki / "ca.pem").read_bytes())]


def test_a_pdf_gets_a_pades_signature_and_a_second_participant_adds_another(sim_settings,
                                                                             roots):
    once = sign_version(sim_settings, "c.pdf", make_pdf(5_000, pages=1))
    twice = sign_version(sim_settings, "c.pdf", once)
    assert verify_pades(once, trust_roots=roots).ok
    assert twice.count(b"/ByteRange") == 2 and verify_pades(twice, trust_roots=roots).ok


def test_an_xml_gets_an_enveloped_xades_signature(sim_settings, roots):
    signed = sign_version(sim_settings, "nota.xml", make_xml(3))
    assert verify_xades(signed, trust_roots=roots).ok


def test_anything_else_gets_a_detached_cades_signature(sim_settings, roots):
    content = b"01;remessa;0001\n"
    signature = sign_version(sim_settings, "remessa.txt", content)
    assert verify_cades(signature, content, trust_roots=roots).ok


def test_without_a_certificate_or_with_a_broken_document_the_signer_answers_500(sim_settings):
    with pytest.raises(SignerApiError) as unconfigured:
        sign_version(LacunaSimSettings(), "c.pdf", b"%PDF-1.4")
    with pytest.raises(SignerApiError) as broken:
        sign_version(sim_settings, "c.pdf", b"not a pdf at all")
    assert (unconfigured.value.status, unconfigured.value.code) == (500,
                                                                    "SimulatorNotConfigured")
    assert (broken.value.status, broken.value.code) == (500, "SigningFailed")
