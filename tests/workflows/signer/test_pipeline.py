"""The signing pipeline end to end on Temporal: formats, failures, divergence, names, races."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from activities.signer import engine
from activities.signer.contracts.jobs import JobResult, JobSource, JobStatus, SignerErrorCode
from activities.signer.crypto.samples import make_deep_pdf, make_pdf, make_remittance, make_xml
from activities.signer.enqueue import Outcome


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} not installed (make test installs it as root)")
    return path


async def test_each_format_is_signed_verified_promoted_and_the_input_released(signer):
    inputs = {"doc.pdf": make_pdf(), "nota.xml": make_xml(), "folha.rem": make_remittance()}
    jobs = {}
    for name, data in inputs.items():
        result = await signer.enqueue(signer.drop(name, data))
        assert result.outcome is Outcome.ENQUEUED
        jobs[name] = result.job_id
    finished = {name: await signer.wait_for(job_id) for name, job_id in jobs.items()}
    assert {name: job.status for name, job in finished.items()} == dict.fromkeys(
        inputs, JobStatus.COMPLETED.value)
    output = signer.settings.storage_root / "output"
    assert sorted(p.name for p in output.iterdir()) == [
        "doc.signed.pdf", "folha.rem.p7m", "nota.signed.xml"]
    assert not any(signer.inbox.iterdir()), "inputs are removed after verification"
    for job_id in jobs.values():
        await signer.settled(job_id)
    assert not any((signer.settings.storage_root / "processing").iterdir())
    history = [h.to_status for h in await signer.history(jobs["doc.pdf"]) if h.to_status]
    assert history == ["Queued", "Processing", "Verifying", "Completed"]
    assert finished["doc.pdf"].input_sha256 and finished["doc.pdf"].output_path


async def test_outputs_pass_verifiers_nobody_here_wrote(signer):
    remittance = make_remittance()
    for name, data in {"a.pdf": make_pdf(), "b.xml": make_xml(), "c.rem": remittance}.items():
        await signer.wait_for((await signer.enqueue(signer.drop(name, data))).job_id)
    output = signer.settings.storage_root / "output"
    ca = signer.settings.data_dir / "pki" / "ca.pem"
    content = signer.settings.data_dir / "c.rem"
    content.write_bytes(remittance)
    pdfsig = subprocess.run([_tool("pdfsig"), str(output / "a.signed.pdf")],
                            capture_output=True, text=True)
    assert "Signature is Valid" in pdfsig.stdout, pdfsig.stdout
    cms = subprocess.run([_tool("openssl"), "cms", "-verify", "-binary", "-inform", "DER",
                          "-in", str(output / "c.rem.p7m"), "-content", str(content),
                          "-CAfile", str(ca), "-purpose", "any", "-out", "/dev/null"],
                         capture_output=True, text=True)
    assert cms.returncode == 0 and "Verification successful" in cms.stderr, cms.stderr
    xml = subprocess.run([_tool("xmlsec1"), "--verify", "--trusted-pem", str(ca),
                          str(output / "b.signed.xml")], capture_output=True, text=True)
    assert xml.returncode == 0 and "OK" in xml.stderr, xml.stderr


@pytest.mark.parametrize(("name", "data", "code"), [
    ("broken.pdf", b"%PDF-1.7 this is not a pdf", "document.corrupt"),
    ("empty.pdf", b"", "document.empty"),
    ("bad.xml", b"<unclosed>", "document.corrupt"),
    # A page tree nested 3,000 deep exhausts the parser's recursion: the file is at fault.
    ("deep.pdf", make_deep_pdf(3_000), "document.corrupt"),
])
async def test_bad_documents_fail_with_their_code_and_lose_nothing(signer, name, data, code):
    job_id = (await signer.enqueue(signer.drop(name, data))).job_id
    job = await signer.wait_for(job_id)
    assert (job.status, job.error_code) == (JobStatus.FAILED.value, code)
    assert (signer.inbox / name).read_bytes() == data, "the input stays where it was"
    assert (signer.settings.storage_root / "error" / job_id / name).read_bytes() == data
    failed = (await signer.history(job_id))[-1]
    assert failed.to_status == "Failed" and failed.code == code
    assert f"error/{job_id}" in failed.message


async def test_an_existing_output_is_never_overwritten(signer):
    existing = signer.settings.storage_root / "output" / "doc.signed.pdf"
    existing.parent.mkdir(parents=True, exist_ok=True)
    existing.write_bytes(b"someone else's file")
    job_id = (await signer.enqueue(signer.drop("doc.pdf", make_pdf()))).job_id
    job = await signer.wait_for(job_id)
    assert job.status == JobStatus.FAILED.value
    assert job.error_code == SignerErrorCode.OUTPUT_EXISTS
    assert job.error_message.startswith(f"Output already exists at {existing}")
    assert job.error_message.endswith("resolve manually before re-queueing.")
    assert existing.read_bytes() == b"someone else's file"
    assert (signer.inbox / "doc.pdf").exists()


async def test_an_input_rewritten_mid_job_is_kept_and_reported(signer):
    path = signer.drop("remessa.rem", make_remittance())

    def rewrite(fn, request):
        if fn is engine.sign:
            path.write_bytes(b"corrected by the producer\n")

    signer.executor.before = rewrite
    job_id = (await signer.enqueue(path)).job_id
    job = await signer.wait_for(job_id)
    assert job.status == JobStatus.COMPLETED.value, "a divergence is not a signing failure"
    assert path.read_bytes() == b"corrected by the producer\n", "the correction is not destroyed"
    assert (signer.settings.storage_root / "output" / "remessa.rem.p7m").exists()
    codes = [h.code for h in await signer.history(job_id)]
    assert SignerErrorCode.JOB_INPUT_DIVERGED in codes
    [event] = await signer.events("InputDiverged")
    assert event.properties["path"] == str(path) and event.properties["folder"] == "inbox"
    from activities.signer.metrics import INPUTS_DIVERGED

    assert INPUTS_DIVERGED.labels(profile="default")._value.get() >= 1


async def test_the_same_path_gets_one_active_job(signer):
    path = signer.drop("dup.pdf", make_pdf())
    await signer.set_paused(True)
    results = await asyncio.gather(*(signer.enqueue(path) for _ in range(5)))
    outcomes = sorted(r.outcome.value for r in results)
    assert outcomes == ["already-active"] * 4 + ["enqueued"]
    await signer.set_paused(False)


async def test_an_already_processed_name_is_born_failed_and_moved_aside(signer):
    first = (await signer.enqueue(signer.drop("Pagamento.pdf", make_pdf()))).job_id
    assert (await signer.wait_for(first)).status == JobStatus.COMPLETED.value
    second_path = signer.drop("PAGAMENTO.PDF", make_pdf(pages=2))
    result = await signer.enqueue(second_path)
    assert result.outcome is Outcome.ALREADY_PROCESSED
    job = await signer.repository.get(result.job_id)
    assert (job.status, job.error_code) == ("Failed", "file.already-processed")
    assert first in job.error_message
    assert not second_path.exists()
    assert (signer.settings.storage_root / "error" / job.id / "PAGAMENTO.PDF").exists()
    [event] = await signer.events("FileAlreadyProcessed")
    assert event.properties["ownerJobId"] == first


async def test_an_upload_with_a_processed_name_is_refused_and_nothing_stored(signer):
    first = (await signer.enqueue(signer.drop("x.pdf", make_pdf()))).job_id
    await signer.wait_for(first)
    upload = signer.settings.data_dir / "upload" / "x.pdf"
    upload.parent.mkdir()
    upload.write_bytes(make_pdf())
    result = await signer.enqueue(upload, source=JobSource.UPLOAD)
    assert result.outcome is Outcome.ALREADY_PROCESSED and result.job_id == first
    assert upload.exists() and await signer.repository.latest_for_path(str(upload)) is None


async def test_the_watcher_does_not_requeue_a_file_whose_last_job_failed(signer):
    path = signer.drop("bad.pdf", b"%PDF broken")
    await signer.wait_for((await signer.enqueue(path)).job_id)
    again = await signer.enqueue(path)
    assert again.outcome is Outcome.SKIPPED
    rescan = await signer.enqueue(path, source=JobSource.RESCAN)
    assert rescan.outcome is Outcome.ENQUEUED


async def test_pause_holds_new_claims_and_lets_in_flight_jobs_finish(signer):
    signer.executor.hold = release = threading.Event()
    in_flight = (await signer.enqueue(signer.drop("first.pdf", make_pdf()))).job_id
    while (await signer.repository.get(in_flight)).signing_started_at is None:
        await asyncio.sleep(0.05)
    await signer.set_paused(True, drain=False)  # the first job holds the drain open
    queued = (await signer.enqueue(signer.drop("second.pdf", make_pdf()))).job_id
    release.set()
    assert (await signer.wait_for(in_flight)).status == JobStatus.COMPLETED.value
    await asyncio.sleep(1.0)
    assert (await signer.repository.get(queued)).status == JobStatus.QUEUED.value
    await signer.set_paused(False)
    assert (await signer.wait_for(queued)).status == JobStatus.COMPLETED.value


async def test_cancel_racing_the_claim_has_exactly_one_winner(signer):
    await signer.set_paused(True)
    for n in range(10):
        job_id = (await signer.enqueue(signer.drop(f"race{n}.pdf", make_pdf(2000)))).job_id
        cancel, claim = await asyncio.gather(
            signer.repository.transition(job_id, [JobStatus.QUEUED], JobStatus.CANCELED,
                                         "Operator canceled."),
            signer.repository.transition(job_id, [JobStatus.QUEUED], JobStatus.PROCESSING,
                                         "Worker started job."))
        assert cancel != claim, "exactly one of the two writes wins"
        rows = [h for h in await signer.history(job_id) if h.to_status != "Queued"]
        assert len(rows) == 1, "the loser records nothing"
    await signer.set_paused(False)


async def test_a_canceled_job_is_not_signed_when_a_worker_reaches_it(signer):
    await signer.set_paused(True)
    path = signer.drop("late.pdf", make_pdf())
    job_id = (await signer.enqueue(path)).job_id
    assert await signer.repository.transition(job_id, [JobStatus.QUEUED], JobStatus.CANCELED,
                                              "Operator canceled.")
    await signer.set_paused(False)
    handle = signer.client.get_workflow_handle(f"signer-job:{job_id}",
                                                        result_type=JobResult)
    result = await handle.result()
    assert result.status == JobStatus.CANCELED
    assert path.exists() and not (signer.settings.storage_root / "output" / "late.signed.pdf"
                                  ).exists()


async def test_a_job_lost_after_the_signing_call_fails_and_is_never_signed_again(signer):
    """The state a kill -9 leaves mid-sign: Processing with the signing checkpoint written."""
    await signer.set_paused(True)
    path = signer.drop("lost.pdf", make_pdf())
    job_id = (await signer.enqueue(path)).job_id
    assert await signer.repository.transition(job_id, [JobStatus.QUEUED], JobStatus.PROCESSING,
                                              "Worker started job (dead-worker).",
                                              instance_id="dead-worker")
    staging = signer.storage.staging_dir(job_id)
    staging.mkdir(parents=True)
    (staging / "lost.pdf").write_bytes(path.read_bytes())
    from shared.db.models import utcnow

    await signer.repository.note(job_id, "Signing (Pades).", signing_started_at=utcnow())
    signed = []
    signer.executor.before = lambda fn, request: signed.append(fn)
    await signer.set_paused(False)
    job = await signer.wait_for(job_id)
    assert (job.status, job.error_code) == ("Failed", SignerErrorCode.JOB_INTERRUPTED)
    assert signed == [], "no automatic second signature"
    assert (signer.settings.storage_root / "error" / job_id / "lost.pdf").exists()
    assert path.exists(), "the input stays"
    [event] = await signer.events("JobTakenOver")
    assert event.properties["from"] == "dead-worker" and event.properties["signingStarted"]


async def test_a_job_lost_before_the_signing_call_is_requeued_and_completes(signer):
    await signer.set_paused(True)
    job_id = (await signer.enqueue(signer.drop("early.pdf", make_pdf()))).job_id
    assert await signer.repository.transition(job_id, [JobStatus.QUEUED], JobStatus.PROCESSING,
                                              "Worker started job (dead-worker).",
                                              instance_id="dead-worker")
    await signer.set_paused(False)
    assert (await signer.wait_for(job_id)).status == JobStatus.COMPLETED.value
    [event] = await signer.events("JobTakenOver")
    assert event.properties["signingStarted"] is False


async def test_a_degraded_profile_fails_its_jobs_with_profile_degraded(signer):
    profile = await signer.profile()
    Path(profile.pfx_password_file).write_text("not the password")
    async with signer.sessions() as session:
        row = await session.get(type(profile), "default")
        row.version += 1  # a changed profile is reopened, not served from the key cache
        session.add(row)
        await session.commit()
    job = await signer.wait_for((await signer.enqueue(signer.drop("d.pdf", make_pdf()))).job_id)
    assert (job.status, job.error_code) == ("Failed", SignerErrorCode.PROFILE_DEGRADED)


async def test_clear_jobs_while_a_job_is_signing_leaves_no_row_and_no_crash(signer):

    signer.executor.hold = release = threading.Event()
    job_id = (await signer.enqueue(signer.drop("mid.pdf", make_pdf()))).job_id
    while (await signer.repository.get(job_id)).signing_started_at is None:
        await asyncio.sleep(0.05)
    result = await signer.face.jobs.clear(actor="op")
    assert result.deleted == 1
    release.set()
    handle = signer.client.get_workflow_handle(f"signer-job:{job_id}",
                                                        result_type=JobResult)
    outcome = await handle.result()
    assert outcome.status == JobStatus.FAILED, "the worker fails the job it can no longer sign"
    assert await signer.repository.get(job_id) is None
    assert not any((signer.settings.storage_root / "output").iterdir())


async def test_metrics_count_jobs_by_status_and_profile_and_time_each_stage(signer):
    from activities.signer.metrics import IN_FLIGHT, JOBS_FINISHED, STAGE_SECONDS

    completed = JOBS_FINISHED.labels(status="Completed", profile="default", format="Pades")
    before = completed._value.get()
    signs_before = STAGE_SECONDS.labels(stage="sign")._sum.get()
    await signer.wait_for((await signer.enqueue(signer.drop("m.pdf", make_pdf()))).job_id)
    # The row turns Completed before the activity counts it and leaves: wait for the return.
    for _ in range(200):
        if completed._value.get() > before and IN_FLIGHT.labels(format="Pades")._value.get() == 0:
            break
        await asyncio.sleep(0.05)
    assert completed._value.get() == before + 1
    assert STAGE_SECONDS.labels(stage="sign")._sum.get() > signs_before
    assert IN_FLIGHT.labels(format="Pades")._value.get() == 0


async def test_the_staged_row_is_written_with_the_signing_checkpoint_in_one_commit(signer,
                                                                                  monkeypatch):
    # Nothing reads the fingerprint between staging and the checkpoint on a plain local job:
    # both history rows go in the checkpoint's transaction, the staged one first.
    note = signer.repository.note
    calls: list[tuple[str, str | None]] = []

    async def recorded(job_id, message, **kwargs):
        calls.append((message, kwargs.get("preceded_by")))
        return await note(job_id, message, **kwargs)

    monkeypatch.setattr(signer.repository, "note", recorded)
    data = make_pdf()
    job_id = (await signer.enqueue(signer.drop("one-commit.pdf", data))).job_id
    job = await signer.wait_for(job_id)
    assert job.status == JobStatus.COMPLETED.value
    assert [(message, (earlier or "")[:7]) for message, earlier in calls] == [
        ("Signing (Pades).", "Staged ")]
    messages = [h.message for h in await signer.history(job_id)]
    staged = next(i for i, m in enumerate(messages) if m.startswith("Staged "))
    assert messages[staged + 1] == "Signing (Pades)."
    assert job.input_size == len(data) and job.input_sha256
