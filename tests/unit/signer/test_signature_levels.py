"""PAdES B-B/B-T/B-LT/B-LTA and CAdES-T against a real TSA, OCSP responder and CRLs.

certomancer serves the PKI on loopback; the outputs are validated with pyHanko's validators
(revocation checking on, the clock moved past the signer certificate's expiry) and pdfsig.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyhanko.keys.internal import translate_pyca_cryptography_cert_to_asn1
from pyhanko.sign.ades.report import AdESPassed

from activities.signer.contracts.jobs import SignatureFormat
from activities.signer.crypto import samples
from activities.signer.crypto._sync import run_sync
from activities.signer.crypto.cades import sign_cades
from activities.signer.crypto.errors import ErrorCode, SignerCryptoError
from activities.signer.crypto.levels import SignatureLevel, unsupported
from activities.signer.crypto.ltv import (
    LevelOptions,
    async_renew_archive,
    async_sign_pades_level,
    last_timestamp_expiry,
)
from activities.signer.crypto.signer import LoadedSigner, load_pfx_signer
from activities.signer.crypto.timestamps import FailoverTimeStamper, TsaEndpoint
from tests.support.ltv_pki import DEAD_URL, PFX_PASSWORD, LtvPki, running_pki
from tests.support.ltv_validation import ades_status, embedded_evidence_valid, signature_time
from tests.support.tsa_gate import tsa_gate

LEVELS = list(SignatureLevel)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LtvPki]:
    with running_pki(tmp_path_factory.mktemp("ltv")) as running:
        yield running


@pytest.fixture(scope="module")
def ltv_signer(pki: LtvPki) -> LoadedSigner:
    return load_pfx_signer(pki.signer_pfx.read_bytes(), PFX_PASSWORD)


def _options(pki: LtvPki, level: SignatureLevel, *urls: str) -> LevelOptions:
    endpoints = [TsaEndpoint(u, timeout_seconds=5) for u in urls or (pki.tsa_url(),)]
    return LevelOptions(level, FailoverTimeStamper(endpoints),
                        (translate_pyca_cryptography_cert_to_asn1(pki.root()),), 5.0)


def _sign(pki: LtvPki, signer: LoadedSigner, level: SignatureLevel, *urls: str):
    return run_sync(async_sign_pades_level(samples.make_pdf(20_000), signer,
                                           _options(pki, level, *urls)))


@pytest.fixture(scope="module")
def signed(pki: LtvPki, ltv_signer: LoadedSigner) -> dict[SignatureLevel, bytes]:
    return {level: _sign(pki, ltv_signer, level).data for level in LEVELS}


def _after_expiry(pki: LtvPki) -> dt.datetime:
    return pki.signer_expiry() + dt.timedelta(days=30)


def test_each_level_carries_what_it_promises(signed):
    assert signature_time(signed[SignatureLevel.B_B]) is None
    for level in (SignatureLevel.B_T, SignatureLevel.B_LT, SignatureLevel.B_LTA):
        assert signature_time(signed[level]) is not None
    assert b"/DSS" not in signed[SignatureLevel.B_T]
    assert b"/DSS" in signed[SignatureLevel.B_LT]
    assert last_timestamp_expiry(signed[SignatureLevel.B_LT]) is None
    assert last_timestamp_expiry(signed[SignatureLevel.B_LTA]) is not None


@pytest.mark.parametrize(("level", "valid"), [
    (SignatureLevel.B_B, False), (SignatureLevel.B_T, False),
    (SignatureLevel.B_LT, True), (SignatureLevel.B_LTA, True)])
def test_embedded_evidence_outlives_the_signer_certificate(pki, signed, level, valid):
    # 30 days after the signer's certificate expired, revocation required: the signer judged
    # on the file's own evidence, the (still valid) TSA by its responders as of that day.
    root = translate_pyca_cryptography_cert_to_asn1(pki.root())
    assert asyncio.run(embedded_evidence_valid(signed[level], root, _after_expiry(pki))) is valid


@pytest.mark.parametrize("level", LEVELS)
def test_etsi_validation_past_expiry_passes_b_lta_only(pki, signed, level):
    root = translate_pyca_cryptography_cert_to_asn1(pki.root())
    indication = asyncio.run(ades_status(signed[level], root, _after_expiry(pki)))
    assert (indication is AdESPassed.OK) is (level is SignatureLevel.B_LTA)


def test_renewal_adds_a_document_timestamp_that_still_validates(pki, signed):
    renewed = run_sync(async_renew_archive(signed[SignatureLevel.B_LTA],
                                           _options(pki, SignatureLevel.B_LTA)))
    assert renewed.data.startswith(signed[SignatureLevel.B_LTA])  # a new revision, appended
    assert renewed.data.count(b"/DocTimeStamp") == 2
    root = translate_pyca_cryptography_cert_to_asn1(pki.root())
    assert asyncio.run(ades_status(renewed.data, root, _after_expiry(pki))) is AdESPassed.OK


def test_pdfsig_shows_the_signature_and_the_timestamps(pki, signed, tmp_path):
    for level, data in signed.items():
        path = tmp_path / f"{level}.pdf"
        path.write_bytes(data)
        report = subprocess.run(["pdfsig", "-nocert", str(path)], capture_output=True,
                                text=True, check=False).stdout
        assert "Signature #1" in report and "Signature is Valid." in report
        # poppler lists a document timestamp as a signature by the TSA.
        assert ("LTV Time Stamping Authority" in report) is (level is SignatureLevel.B_LTA)
    # The signature timestamp is inside the CMS: pdfsig dumps it, openssl shows the token.
    dump = tmp_path / "dump"
    dump.mkdir()
    subprocess.run(["pdfsig", "-dump", str(tmp_path / "B-T.pdf")], cwd=dump, check=True,
                   capture_output=True)
    [cms] = dump.glob("*.sig0")
    printed = subprocess.run(["openssl", "cms", "-cmsout", "-print", "-inform", "DER",
                              "-in", str(cms)], capture_output=True, text=True).stdout
    assert "id-smime-aa-timeStampToken" in printed


def test_a_tsa_that_fails_is_followed_by_the_next(pki, ltv_signer):
    result = _sign(pki, ltv_signer, SignatureLevel.B_T, DEAD_URL + "/tsa", pki.tsa_url("tsa2"))
    assert pki.tsa_url("tsa2") in result.detail


def test_no_tsa_answering_fails_with_its_own_code_never_b_b(pki, ltv_signer):
    with pytest.raises(SignerCryptoError) as failure:
        _sign(pki, ltv_signer, SignatureLevel.B_T, DEAD_URL + "/a", DEAD_URL + "/b")
    assert failure.value.code is ErrorCode.TIMESTAMP_UNAVAILABLE
    assert "127.0.0.1:1/a" in failure.value.message and "127.0.0.1:1/b" in failure.value.message


def test_tsa_credentials_are_sent_and_never_shown(pki, ltv_signer):
    with tsa_gate(pki.tsa_url(), "Bearer right-token") as (url, seen):
        wrong = TsaEndpoint(url, auth="bearer", secret="wrong-token", timeout_seconds=5)
        right = TsaEndpoint(url, auth="bearer", secret="right-token", timeout_seconds=5)
        stamper = FailoverTimeStamper([wrong, right])
        run_sync(async_sign_pades_level(samples.make_pdf(5_000), ltv_signer, LevelOptions(
            SignatureLevel.B_T, stamper, ())))
    # A 401 goes to the next TSA: once to learn the token's size, once for the signature.
    assert seen == ["Bearer wrong-token", "Bearer right-token"] * 2
    assert "right-token" not in repr(right)
    with tsa_gate(pki.tsa_url(), "Basic dXNlcjpwdw==") as (url, seen):
        basic = TsaEndpoint(url, auth="basic", username="user", secret="pw", timeout_seconds=5)
        run_sync(async_sign_pades_level(samples.make_pdf(5_000), ltv_signer, LevelOptions(
            SignatureLevel.B_T, FailoverTimeStamper([basic]), ())))
    assert seen == ["Basic dXNlcjpwdw=="] * 2


def test_revocation_is_ocsp_first_and_crl_when_ocsp_is_down(pki):
    from activities.signer.crypto import revocation
    from activities.signer.crypto.ltv import signer_chain

    for pfx, source in ((pki.signer_pfx, "OCSP"), (pki.crl_only_pfx, "CRL")):
        chain = signer_chain(load_pfx_signer(pfx.read_bytes(), PFX_PASSWORD))
        evidence = run_sync(revocation.checked(chain, chain[1:], timeout=5))
        assert set(evidence.sources.values()) == {source}


def test_an_unreachable_responder_fails_b_lt_before_any_timestamp(tmp_path):
    with running_pki(tmp_path) as pki:
        signer = load_pfx_signer(pki.signer_pfx.read_bytes(), PFX_PASSWORD)
        options = _options(pki, SignatureLevel.B_LT)
        pki.stop()
        with pytest.raises(SignerCryptoError) as failure:
            run_sync(async_sign_pades_level(samples.make_pdf(5_000), signer, options))
    assert failure.value.code is ErrorCode.REVOCATION_UNAVAILABLE
    assert "OCSP did not answer" in failure.value.message
    assert "CRL did not answer" in failure.value.message


def test_a_revoked_signer_is_refused(tmp_path):
    with running_pki(tmp_path) as pki:
        signer = load_pfx_signer(pki.signer_pfx.read_bytes(), PFX_PASSWORD)
        run_sync(async_sign_pades_level(samples.make_pdf(5_000), signer,
                                        _options(pki, SignatureLevel.B_LT)))
        pki.restart(signer_revoked=True)
        for level in (SignatureLevel.B_LT, SignatureLevel.B_LTA):
            with pytest.raises(SignerCryptoError) as failure:
                run_sync(async_sign_pades_level(samples.make_pdf(5_000), signer,
                                                _options(pki, level)))
            assert failure.value.code is ErrorCode.CERTIFICATE_REVOKED
            assert "revoked" in failure.value.message


def test_cades_t_carries_a_signature_timestamp(pki, ltv_signer):
    from asn1crypto import cms

    stamper = FailoverTimeStamper([TsaEndpoint(pki.tsa_url(), timeout_seconds=5)])
    plain = cms.ContentInfo.load(sign_cades(b"remessa", ltv_signer))
    stamped = cms.ContentInfo.load(sign_cades(b"remessa", ltv_signer, timestamper=stamper))
    assert plain["content"]["signer_infos"][0]["unsigned_attrs"].native is None
    [attribute] = stamped["content"]["signer_infos"][0]["unsigned_attrs"]
    assert attribute["type"].native == "signature_time_stamp_token"


def test_levels_a_format_cannot_reach_are_refused():
    assert unsupported(SignatureFormat.PADES, SignatureLevel.B_LTA) is None
    assert unsupported(SignatureFormat.CADES, SignatureLevel.B_T) is None
    assert "CAdES-LT is not supported" in unsupported(SignatureFormat.CADES,
                                                      SignatureLevel.B_LT)
    assert "XAdES-T is not supported" in unsupported(SignatureFormat.XADES, SignatureLevel.B_T)


def test_ltv_pki_files_exist(pki):
    assert Path(pki.signer_pfx).exists() and Path(pki.root_pem).exists()
