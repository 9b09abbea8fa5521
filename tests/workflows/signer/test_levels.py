"""Signature levels through the pipeline: real TSA/OCSP/CRL (certomancer), real Temporal, real
store; the archive renewal workflow and its schedule; cloud certificates refused."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyhanko.keys.internal import translate_pyca_cryptography_cert_to_asn1
from sqlmodel import select
from temporalio.client import ScheduleUpdate
from temporalio.worker import Worker

from activities.signer.archive import ArchiveActivities, ArchiveRegistry, timestamp_count
from activities.signer.archive_schedule import ensure_archive_schedule
from activities.signer.contracts.archive import (
    ARCHIVE_RENEWAL_WORKFLOW,
    RenewArchiveInput,
    RenewArchivesInput,
    RenewArchivesResult,
    archive_schedule_id,
)
from activities.signer.contracts.jobs import JobStatus
from activities.signer.crypto.samples import make_pdf
from activities.signer.models.jobs import ArchivedOutput
from tests.support.csc_service import csc_service
from tests.support.ltv_pki import DEAD_URL, PFX_PASSWORD, LtvPki, running_pki
from tests.support.ltv_validation import embedded_evidence_valid
from tests.support.profiles import update_default_profile
from workflows.signer.archive import ArchiveRenewalWorkflow

TEN_YEARS = 3650 * 86400.0


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LtvPki]:
    with running_pki(tmp_path_factory.mktemp("ltv-pipeline")) as running:
        yield running


async def _use_pki(signer, pki: LtvPki, tmp_path: Path, level: str, urls: list[str],
                   **fields) -> None:
    password = tmp_path / "pfx.password"
    password.write_text(PFX_PASSWORD)
    await update_default_profile(
        signer, format="pades", pfx_path=str(pki.signer_pfx), pfx_password_file=str(password),
        pfx_password_env=None, trust_roots=[str(pki.root_pem)], signature_level=level,
        timestamp={"urls": urls, "auth": "none", "hash_algorithm": "sha256",
                   "timeout_seconds": 5}, revocation_timeout_seconds=5, **fields)


async def _failed_with(signer, job_id: str, name: str, code: str) -> None:
    job = await signer.wait_for(job_id)
    assert (job.status, job.error_code) == (JobStatus.FAILED.value, code), job.error_message
    assert (signer.inbox / name).exists(), "the input waits where it was"
    assert (signer.settings.storage_root / "error" / job_id / name).exists()
    output = signer.settings.storage_root / "output"
    assert not output.exists() or not any(output.iterdir()), "nothing was promoted"


async def test_a_b_lta_job_is_signed_archived_and_renewed_once(signer, pki, tmp_path,
                                                               temporal_env):
    await _use_pki(signer, pki, tmp_path, "B-LTA", [DEAD_URL + "/tsa", pki.tsa_url("tsa2")])
    job_id = (await signer.enqueue(signer.drop("folha.pdf", make_pdf(20_000)))).job_id
    job = await signer.wait_for(job_id)
    assert job.status == JobStatus.COMPLETED.value, job.error_message
    notes = " ".join(h.message for h in await signer.history(job_id))
    assert f"timestamp from {pki.tsa_url('tsa2')}" in notes, "the second TSA answered"
    assert "revocation data: OCSP" in notes
    output = Path(job.output_path)
    root = translate_pyca_cryptography_cert_to_asn1(pki.root())
    assert await embedded_evidence_valid(output.read_bytes(), root, pki.signer_expiry())

    async with signer.sessions() as session:
        [row] = (await session.exec(select(ArchivedOutput))).all()
    archived = Path(row.path)
    assert archived == signer.settings.storage_root / "archive" / "folha.signed.pdf"
    assert archived.read_bytes() == output.read_bytes()
    assert (row.level, row.timestamps, row.job_id) == ("B-LTA", 1, job_id)

    registry = ArchiveRegistry(signer.sessions, signer.settings.storage_root)
    renewal = ArchiveActivities(registry, signer.executor.pool, "test-worker")
    queue = f"archive-{uuid.uuid4().hex[:8]}"
    async with Worker(temporal_env.client, task_queue=queue,
                      workflows=[ArchiveRenewalWorkflow],
                      activities=[renewal.due, renewal.renew]):
        async def run(margin: float) -> RenewArchivesResult:
            return await temporal_env.client.execute_workflow(
                ARCHIVE_RENEWAL_WORKFLOW, RenewArchivesInput(margin_seconds=margin),
                id=f"archive-{uuid.uuid4()}", task_queue=queue,
                result_type=RenewArchivesResult)

        assert await run(margin=60.0) == RenewArchivesResult(), "nothing expires that soon"
        assert await run(margin=TEN_YEARS) == RenewArchivesResult(renewed=1)
    assert output.read_bytes() == archived.read_bytes()[:len(output.read_bytes())], \
        "a new revision appended; output/ keeps the original"
    assert await asyncio.to_thread(timestamp_count, archived) == 2
    [event] = await signer.events("ArchiveRenewed")
    assert event.properties["name"] == "folha.signed.pdf"

    # A replayed renewal (the same idempotency key) adds nothing.
    before = archived.read_bytes()
    replay = await renewal.renew(RenewArchiveInput(name="folha.signed.pdf", timestamps=1))
    assert (replay.renewed, replay.replayed) == (False, True)
    assert archived.read_bytes() == before
    # Lost between the file and the row: the row catches up with the file, nothing is added.
    async with signer.sessions() as session:
        row = await session.get(ArchivedOutput, "folha.signed.pdf")
        row.timestamps = 1
        session.add(row)
        await session.commit()
    caught_up = await renewal.renew(RenewArchiveInput(name="folha.signed.pdf", timestamps=1))
    assert (caught_up.renewed, caught_up.replayed) == (False, True)
    assert archived.read_bytes() == before
    async with signer.sessions() as session:
        assert (await session.get(ArchivedOutput, "folha.signed.pdf")).timestamps == 2


async def test_no_tsa_answering_fails_the_job_never_b_b(signer, pki, tmp_path):
    await _use_pki(signer, pki, tmp_path, "B-T", [DEAD_URL + "/a", DEAD_URL + "/b"])
    job_id = (await signer.enqueue(signer.drop("contrato.pdf", make_pdf()))).job_id
    await _failed_with(signer, job_id, "contrato.pdf", "signature.timestamp-unavailable")
    job = await signer.repository.get(job_id)
    assert "127.0.0.1:1/a" in job.error_message and "127.0.0.1:1/b" in job.error_message


async def test_a_revoked_signer_fails_the_job_with_its_code(signer, tmp_path):
    with running_pki(tmp_path / "pki") as pki:
        pki.restart(signer_revoked=True)
        await _use_pki(signer, pki, tmp_path, "B-LT", [pki.tsa_url()])
        job_id = (await signer.enqueue(signer.drop("revogado.pdf", make_pdf()))).job_id
        await _failed_with(signer, job_id, "revogado.pdf", "signature.certificate-revoked")


async def test_a_cloud_certificate_refused_fails_before_any_file_moves(signer, pki,
                                                                       monkeypatch):
    monkeypatch.setenv("ESTEIRA_TEST_CSC_TOKEN", "not-the-token")
    with csc_service(str(pki.config_path)) as service:
        await update_default_profile(signer, format="pades", cert_source="csc", csc={
            "service_url": service.url, "credential_id": "esteira/signer",
            "token_env": "ESTEIRA_TEST_CSC_TOKEN", "timeout_seconds": 5})
        job_id = (await signer.enqueue(signer.drop("nuvem.pdf", make_pdf()))).job_id
        await _failed_with(signer, job_id, "nuvem.pdf", "signature.remote-signer-refused")
    job = await signer.repository.get(job_id)
    assert "not-the-token" not in job.error_message


async def test_the_renewal_schedule_keeps_an_operator_pause(settings, temporal_env):
    settings.temporal.address = temporal_env.client.service_client.config.target_host
    settings.pipeline.task_queue_suffix = f"-{uuid.uuid4().hex[:8]}"
    stop = asyncio.Event()
    await ensure_archive_schedule(settings, "signer-jobs-v1", stop)
    handle = temporal_env.client.get_schedule_handle(
        archive_schedule_id(settings.pipeline.task_queue_suffix))
    described = await handle.describe()
    assert described.schedule.spec.intervals[0].every == dt.timedelta(hours=6)
    await handle.pause(note="audit")
    settings.signing.archive_check_every_seconds = 3600
    await ensure_archive_schedule(settings, "signer-jobs-v1", stop)
    described = await handle.describe()
    assert described.schedule.state.paused and described.schedule.state.note == "audit"
    assert described.schedule.spec.intervals[0].every == dt.timedelta(hours=1)
    await handle.update(lambda current: ScheduleUpdate(schedule=current.description.schedule))
    await handle.delete()
