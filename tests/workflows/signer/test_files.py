"""Files the pipeline must handle without losing anything: locked, unreadable, huge, encrypted."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from pydantic import SecretStr

from activities.signer.contracts.jobs import SignerErrorCode
from activities.signer.crypto.samples import make_pdf
from activities.signer.crypto.verify import async_verify_pades
from activities.signer.encryption import load_encryption_key
from activities.signer.models.jobs import SigningProfile

REPO = Path(__file__).resolve().parents[3]


async def test_an_input_held_by_another_lock_fails_the_job_naming_the_file(signer):
    path = signer.drop("held.rem", b"0" * 240 + b"\n")
    with path.open("rb") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        job = await signer.wait_for((await signer.enqueue(path)).job_id)
    assert (job.status, job.error_code) == ("Failed", SignerErrorCode.INPUT_LOCKED)
    assert "held by another lease" in job.error_message and str(path) in job.error_message
    assert path.exists()


def test_an_unreadable_input_is_reported_not_forced():
    # Root reads anything, so the child drops to an unprivileged user (after its imports,
    # which live under root's home) before it touches the file.
    tmp_path = Path(tempfile.mkdtemp(prefix="esteira-perm-"))  # pytest's tmp is root-only
    source = tmp_path / "secret.rem"
    source.write_bytes(b"x")
    source.chmod(0)
    os.chmod(tmp_path, 0o777)
    code = (
        "import os; from pathlib import Path; "
        "from activities.signer.storage import StorageTree, StorageError\n"
        "if os.geteuid() == 0:\n"
        "    os.setgid(65534); os.setuid(65534)\n"
        "try:\n"
        f"    StorageTree(Path({str(tmp_path)!r}) / 'st', read_attempts=2)"
        f".stage('job', Path({str(source)!r}))\n"
        "except StorageError as exc:\n"
        "    print(exc.code, exc.message)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=REPO, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.stdout.startswith("input.unreadable unreadable:"), result.stdout + result.stderr
    assert source.exists()
    shutil.rmtree(tmp_path)


async def test_a_200_mb_file_is_signed_and_released(signer):
    path = signer.inbox / "lote-grande.bin"
    chunk = os.urandom(1024 * 1024)
    with path.open("wb") as handle:
        for _ in range(200):
            handle.write(chunk)
    job = await signer.wait_for((await signer.enqueue(path)).job_id, timeout=180)
    assert job.status == "Completed", job.error_message
    assert job.input_size == 200 * 1024 * 1024
    assert not path.exists()
    assert (signer.settings.storage_root / "output" / "lote-grande.bin.p7m").stat().st_size < 10_000


async def test_an_encrypting_profile_writes_bsenc_that_decrypt_reads_back(signer):
    signer.settings.signing.encryption_passphrase = SecretStr("correct horse battery staple")
    signer.activities.encryption_key = load_encryption_key(signer.settings)
    await _set_encrypt(signer, True)
    job = await signer.wait_for((await signer.enqueue(signer.drop("e.pdf", make_pdf()))).job_id)
    assert job.status == "Completed", job.error_message
    artifact = Path(job.output_path)
    assert artifact.name == "e.signed.pdf.enc"
    assert artifact.read_bytes()[:9] == b"BSENC\0\0\0\x01"
    env = {**os.environ, "PYTHONPATH": str(REPO),
           "ESTEIRA_DATA_DIR": str(signer.settings.data_dir),
           "ESTEIRA_SIGNING__ENCRYPTION_PASSPHRASE": "correct horse battery staple"}
    result = subprocess.run([sys.executable, "-m", "services.cli", "decrypt", str(artifact)],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    plain = artifact.with_name("e.signed.pdf").read_bytes()
    ca = signer.settings.data_dir / "pki" / "ca.pem"
    from cryptography import x509

    verdict = await async_verify_pades(
        plain, trust_roots=[x509.load_pem_x509_certificate(ca.read_bytes())])
    assert verdict.ok, verdict.reason
    wrong = subprocess.run([sys.executable, "-m", "services.cli", "decrypt", str(artifact),
                            "-o", str(artifact.with_name("w.pdf"))], capture_output=True,
                           text=True, env={**env, "ESTEIRA_SIGNING__ENCRYPTION_PASSPHRASE": "x"},
                           timeout=60)
    assert wrong.returncode == 1 and not artifact.with_name("w.pdf").exists()


async def test_an_encrypting_profile_without_a_passphrase_fails_its_jobs(signer):
    await _set_encrypt(signer, True)
    job = await signer.wait_for((await signer.enqueue(signer.drop("n.pdf", make_pdf()))).job_id)
    assert (job.status, job.error_code) == ("Failed", SignerErrorCode.PROFILE_DEGRADED)
    assert "ESTEIRA_SIGNING__ENCRYPTION_PASSPHRASE" in job.error_message


async def _set_encrypt(signer, value: bool) -> None:
    async with signer.sessions() as session:
        profile = await session.get(SigningProfile, "default")
        profile.encrypt = value
        session.add(profile)
        await session.commit()


@pytest.fixture(autouse=True)
def _no_stale_passphrase(monkeypatch):
    monkeypatch.delenv("ESTEIRA_SIGNING__ENCRYPTION_PASSPHRASE", raising=False)
