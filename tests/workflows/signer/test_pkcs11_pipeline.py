"""A job signed end to end through a PKCS#11 token (SoftHSM2), as a production profile would."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from activities.signer import engine
from activities.signer.contracts.jobs import JobStatus, SignerErrorCode
from activities.signer.crypto.certs import sha1_thumbprint
from activities.signer.crypto.samples import make_pdf
from activities.signer.crypto.verify import async_verify_pades
from activities.signer.models.jobs import SigningProfile
from shared.db.models import utcnow
from tests.support.softhsm import PIN, TOKEN_LABEL, SoftToken, build_token

PIN_ENV = "ESTEIRA_TEST_TOKEN_PIN"


@pytest.fixture(scope="module")
def token(tmp_path_factory) -> SoftToken:
    return build_token(tmp_path_factory.mktemp("softhsm"), ["Token Signer"])


@pytest.fixture
def signing_pool(token, monkeypatch):
    """A pool whose processes see this token's SoftHSM config (read once, at module load)."""
    monkeypatch.setenv("SOFTHSM2_CONF", str(token.conf))
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    pool.submit(int).result()  # spawn now, while the environment holds the config
    yield pool
    pool.shutdown(wait=True, cancel_futures=True)


async def _use_token(signer, token: SoftToken, ca_file: Path, pin_env: str) -> None:
    async with signer.sessions() as session:
        profile = await session.get(SigningProfile, "default")
        profile.cert_source = "pkcs11"
        profile.pfx_path = profile.pfx_password_file = profile.pfx_password_env = None
        profile.pkcs11_module = token.module
        profile.pkcs11_token_label = TOKEN_LABEL
        profile.pkcs11_thumbprint = sha1_thumbprint(token.signers["Token Signer"])
        profile.pkcs11_pin_env = pin_env
        profile.trust_roots = [str(ca_file)]
        profile.version += 1
        profile.updated_at = utcnow()
        session.add(profile)
        await session.commit()


@pytest.fixture(autouse=True)
def allowed_module(token, monkeypatch) -> None:
    """The worker's configuration lists the token's module (ESTEIRA_SIGNING__PKCS11_MODULES)."""
    monkeypatch.setattr(engine, "_ALLOWED_PKCS11_MODULES", frozenset({token.module}))


@pytest.fixture
def ca_file(token, tmp_path) -> Path:
    path = tmp_path / "token-ca.pem"
    path.write_bytes(token.ca.public_bytes(serialization.Encoding.PEM))
    return path


async def test_a_job_signs_through_the_token_and_verifies(signer, token, ca_file, monkeypatch):
    monkeypatch.setenv(PIN_ENV, PIN)
    await _use_token(signer, token, ca_file, PIN_ENV)
    job = await signer.wait_for((await signer.enqueue(signer.drop("hsm.pdf", make_pdf()))).job_id)
    assert job.status == JobStatus.COMPLETED.value, job.error_message
    result = await async_verify_pades(Path(job.output_path).read_bytes(), trust_roots=[token.ca])
    assert result.ok and "Token Signer" in result.signer_subject


async def test_a_wrong_pin_fails_the_job_and_keeps_the_file(signer, token, ca_file,
                                                            monkeypatch):
    monkeypatch.setenv(PIN_ENV, "000000")
    await _use_token(signer, token, ca_file, PIN_ENV)
    path = signer.drop("pin.pdf", make_pdf())
    job = await signer.wait_for((await signer.enqueue(path)).job_id)
    assert job.status == JobStatus.FAILED.value
    assert job.error_code == SignerErrorCode.PROFILE_DEGRADED
    assert "refused the PIN" in job.error_message and "000000" not in job.error_message
    assert path.exists(), "the input stays where the operator put it"


async def test_a_module_the_configuration_does_not_list_is_never_loaded(signer, token, ca_file,
                                                                        monkeypatch):
    monkeypatch.setenv(PIN_ENV, PIN)
    monkeypatch.setattr(engine, "_ALLOWED_PKCS11_MODULES", frozenset({"/opt/other.so"}))
    await _use_token(signer, token, ca_file, PIN_ENV)
    path = signer.drop("unlisted.pdf", make_pdf())
    job = await signer.wait_for((await signer.enqueue(path)).job_id)
    assert job.status == JobStatus.FAILED.value
    assert job.error_code == SignerErrorCode.PROFILE_DEGRADED
    assert "not in Signing:Pkcs11Modules" in job.error_message
    assert path.exists(), "the input stays where the operator put it"
