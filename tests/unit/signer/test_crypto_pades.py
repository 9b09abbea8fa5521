"""PAdES signing, checked by poppler's pdfsig and by our in-process verifier."""

import asyncio
from io import BytesIO

import pytest
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.general import find_unique_cms_attribute

from activities.signer.crypto import pades, samples
from activities.signer.crypto.errors import ErrorCode, SignerCryptoError
from activities.signer.crypto.signer import CachedKeySigner
from activities.signer.crypto.verify import verify_pades

from .support import CADES_POLICY, need_tool, run_tool


@pytest.fixture(scope="module")
def signed_pdf(signer, sample_pdf) -> bytes:
    return pades.sign_pades(sample_pdf, signer)


def pdfsig_report(tmp_path, pdf: bytes) -> str:
    pdfsig = need_tool("pdfsig", "poppler-utils")
    path = tmp_path / "doc.pdf"
    path.write_bytes(pdf)
    result = run_tool(pdfsig, "-nocert", path)
    return result.stdout + result.stderr


def test_pdfsig_accepts_signature(tmp_path, signed_pdf):
    report = pdfsig_report(tmp_path, signed_pdf)
    assert "Signature is Valid." in report
    assert "Total document signed" in report
    assert "ETSI.CAdES.detached" in report  # PAdES subfilter, not adbe.pkcs7.detached


def test_pdfsig_rejects_tampered_content(tmp_path, signed_pdf):
    at = signed_pdf.index(b"lorem ipsum")
    tampered = signed_pdf[:at] + b"LOREM" + signed_pdf[at + 5 :]
    report = pdfsig_report(tmp_path, tampered)
    assert "Signature is Valid." not in report
    assert verify_pades(tampered, trust_roots=[]).code is ErrorCode.SIGNATURE_INVALID


def test_unsigned_revision_after_signing_is_rejected(tmp_path, signed_pdf, ca_cert):
    # The signature still verifies over its own byte range; only the diff analysis sees
    # that a later, unsigned revision replaced the page content.
    writer = IncrementalPdfFileWriter(BytesIO(signed_pdf))
    page = writer.root["/Pages"]["/Kids"][0].get_object()
    page["/Contents"] = writer.add_object(generic.StreamObject(stream_data=b"BT (FORGED) Tj ET"))
    writer.update_container(page)
    forged = BytesIO()
    writer.write(forged)
    assert "Not total document signed" in pdfsig_report(tmp_path, forged.getvalue())
    result = verify_pades(forged.getvalue(), trust_roots=[ca_cert])
    assert result.code is ErrorCode.SIGNATURE_INVALID
    assert "changed after signing" in result.reason


def test_cosigning_keeps_both_signatures_valid(tmp_path, signer, signed_pdf, ca_cert):
    twice = pades.sign_pades(signed_pdf, signer)
    report = pdfsig_report(tmp_path, twice)
    assert report.count("Signature is Valid.") == 2
    result = verify_pades(twice, trust_roots=[ca_cert])
    assert result.ok and result.signatures == 2


def test_verify_trusts_issuing_ca(signed_pdf, ca_cert):
    result = verify_pades(signed_pdf, trust_roots=[ca_cert])
    assert result.ok, result.reason
    assert "Esteira DEV Signer" in result.signer_subject


def test_verify_rejects_unknown_ca_unless_chain_check_is_off(signed_pdf, other_ca_cert):
    strict = verify_pades(signed_pdf, trust_roots=[other_ca_cert])
    lenient = verify_pades(signed_pdf, trust_roots=[other_ca_cert], validate_chain=False)
    assert strict.code is ErrorCode.SIGNATURE_UNTRUSTED
    assert lenient.ok


def test_fixed_reservation_signs_once(signer, sample_pdf, monkeypatch):
    calls = []
    real = CachedKeySigner.sign_raw
    monkeypatch.setattr(
        CachedKeySigner, "sign_raw", lambda self, *a: calls.append(1) or real(self, *a)
    )
    pades.sign_pades(sample_pdf, signer)
    assert len(calls) == 1, "pyHanko made a dry-run signature to estimate the size"


def test_reservation_is_tight(signer, signed_pdf):
    # Verification parses /Contents per character; an oversized reservation slows it down.
    sig = PdfFileReader(BytesIO(signed_pdf)).embedded_regular_signatures[0]
    cms_hex = 2 * len(sig.signed_data.dump())
    assert cms_hex < pades.bytes_reserved_for(signer) < cms_hex + 2 * 2048


def test_too_small_reservation_has_stable_code(signer, sample_pdf):
    with pytest.raises(SignerCryptoError) as err:
        pades.sign_pades(sample_pdf, signer, bytes_reserved=1024)
    assert err.value.code is ErrorCode.SIGNING_RESERVE_TOO_SMALL


def test_policy_identifier_is_a_signed_attribute(signer, sample_pdf, ca_cert):
    signed = pades.sign_pades(sample_pdf, signer, policy=CADES_POLICY)
    sig = PdfFileReader(BytesIO(signed)).embedded_regular_signatures[0]
    spi = find_unique_cms_attribute(sig.signer_info["signed_attrs"], "signature_policy_identifier")
    assert spi.chosen["sig_policy_id"].dotted == CADES_POLICY.oid
    assert verify_pades(signed, trust_roots=[ca_cert], expected_policy=CADES_POLICY).ok


def test_missing_policy_is_reported(signed_pdf, ca_cert):
    result = verify_pades(signed_pdf, trust_roots=[ca_cert], expected_policy=CADES_POLICY)
    assert result.code is ErrorCode.SIGNATURE_POLICY_MISMATCH


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"", ErrorCode.DOCUMENT_EMPTY),
        (b"hello, not a pdf", ErrorCode.DOCUMENT_CORRUPT),
        (b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog", ErrorCode.DOCUMENT_CORRUPT),
        (samples.make_pdf(5_000)[:3_000], ErrorCode.DOCUMENT_CORRUPT),
    ],
    ids=["empty", "not-pdf", "garbage-body", "truncated"],
)
def test_bad_input_raises_stable_code(signer, data, code):
    with pytest.raises(SignerCryptoError) as err:
        pades.sign_pades(data, signer)
    assert err.value.code is code
    assert verify_pades(data, trust_roots=[]).code in {code, ErrorCode.SIGNATURE_MISSING}


def test_unsigned_pdf_reports_missing_signature(sample_pdf):
    assert verify_pades(sample_pdf, trust_roots=[]).code is ErrorCode.SIGNATURE_MISSING


def test_sync_api_refuses_running_loop_and_async_api_works(signer, sample_pdf, ca_cert):
    async def main():
        with pytest.raises(RuntimeError, match="async_"):
            pades.sign_pades(sample_pdf, signer)
        return await pades.async_sign_pades(sample_pdf, signer)

    assert verify_pades(asyncio.run(main()), trust_roots=[ca_cert]).ok
