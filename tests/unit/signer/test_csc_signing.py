"""Cloud certificates: signing through a CSC API service (certomancer-csc-dummy on loopback)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pyhanko.keys.internal import translate_pyca_cryptography_cert_to_asn1

from activities.signer.crypto import samples
from activities.signer.crypto._sync import run_sync
from activities.signer.crypto.cades import sign_cades
from activities.signer.crypto.csc import CscSpec, load_csc_signer
from activities.signer.crypto.errors import ErrorCode, SignerCryptoError
from activities.signer.crypto.levels import SignatureLevel
from activities.signer.crypto.ltv import LevelOptions, async_sign_pades_level
from activities.signer.crypto.pades import sign_pades
from activities.signer.crypto.timestamps import FailoverTimeStamper, TsaEndpoint
from activities.signer.crypto.verify import verify_cades, verify_pades
from tests.support.csc_service import PASSWORD, TOKEN, USER, CscService, csc_service
from tests.support.ltv_pki import LtvPki, running_pki
from tests.support.ltv_validation import embedded_evidence_valid

CREDENTIAL = "esteira/signer"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LtvPki]:
    with running_pki(tmp_path_factory.mktemp("csc")) as running:
        yield running


@pytest.fixture
def service(pki: LtvPki) -> Iterator[CscService]:
    with csc_service(str(pki.config_path)) as running:
        yield running


def test_a_bearer_token_signs_pades_and_cades_remotely(pki, service):
    signer = load_csc_signer(CscSpec(service.url, CREDENTIAL, token=TOKEN, pin="1234"))
    try:
        assert "LTV Signer" in signer.subject and signer.private_key is None
        pdf = sign_pades(samples.make_pdf(5_000), signer)
        assert verify_pades(pdf, trust_roots=[pki.root()]).ok
        p7m = sign_cades(b"remessa", signer)
        assert verify_cades(p7m, b"remessa", trust_roots=[pki.root()]).ok
    finally:
        signer.close()
    assert set(service.seen_authorization) == {f"Bearer {TOKEN}"}


def test_static_credentials_log_in_first(pki, service):
    signer = load_csc_signer(CscSpec(service.url, CREDENTIAL, username=USER,
                                     password=PASSWORD))
    try:
        assert verify_pades(sign_pades(samples.make_pdf(5_000), signer),
                            trust_roots=[pki.root()]).ok
    finally:
        signer.close()


def test_a_cloud_certificate_reaches_b_lt(pki, service):
    signer = load_csc_signer(CscSpec(service.url, CREDENTIAL, token=TOKEN))
    root = translate_pyca_cryptography_cert_to_asn1(pki.root())
    stamper = FailoverTimeStamper([TsaEndpoint(pki.tsa_url(), timeout_seconds=5)])
    try:
        signed = run_sync(async_sign_pades_level(samples.make_pdf(5_000), signer, LevelOptions(
            SignatureLevel.B_LT, stamper, (root,), 5.0)))
    finally:
        signer.close()
    assert asyncio.run(embedded_evidence_valid(signed.data, root, pki.signer_expiry()))


@pytest.mark.parametrize(("spec", "code"), [
    ({"token": "stolen"}, ErrorCode.REMOTE_SIGNER_REFUSED),
    ({"username": USER, "password": "wrong"}, ErrorCode.REMOTE_SIGNER_REFUSED),
])
def test_a_refusal_has_its_own_code_and_no_secret(pki, service, spec, code):
    with pytest.raises(SignerCryptoError) as failure:
        load_csc_signer(CscSpec(service.url, CREDENTIAL, **spec))
    assert failure.value.code is code
    assert "HTTP 401" in failure.value.message
    assert "stolen" not in failure.value.message and "wrong" not in failure.value.message


def test_a_service_that_does_not_answer_in_time_is_unavailable(pki, service):
    signer = load_csc_signer(CscSpec(service.url, CREDENTIAL, token=TOKEN, timeout_seconds=1))
    service.slow_seconds = 3
    try:
        with pytest.raises(SignerCryptoError) as failure:
            sign_pades(samples.make_pdf(5_000), signer)
    finally:
        signer.close()
    assert failure.value.code is ErrorCode.REMOTE_SIGNER_UNAVAILABLE
    with pytest.raises(SignerCryptoError) as gone:
        load_csc_signer(CscSpec("http://127.0.0.1:1", CREDENTIAL, token=TOKEN))
    assert gone.value.code is ErrorCode.REMOTE_SIGNER_UNAVAILABLE
