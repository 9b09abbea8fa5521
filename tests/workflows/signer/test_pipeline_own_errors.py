"""An error raised by the job's own steps fails it with its code; only a lost worker is
`job.interrupted`. Names that can't be carried are refused when they are dropped."""

from __future__ import annotations

import errno
import socket

import pytest

from activities.signer import engine, enqueue
from activities.signer.contracts.jobs import JobSource, JobStatus, SignerErrorCode
from activities.signer.crypto.samples import make_pdf
from activities.signer.enqueue import Outcome

# 250 bytes: the filesystem takes it, `<stem>.signed.pdf.tmp` (261 bytes) can't exist.
LONG_NAME = "n" * 246 + ".pdf"


async def _assert_failed_as_itself(signer, job_id: str, name: str, code: str) -> None:
    job = await signer.wait_for(job_id)
    assert (job.status, job.error_code) == (JobStatus.FAILED.value, code)
    assert await signer.events("JobTakenOver") == [], "no worker was lost"
    history = await signer.history(job_id)
    assert not any("Taken over" in h.message for h in history)
    assert [h.to_status for h in history if h.to_status][-1] == "Failed"
    assert (signer.inbox / name).exists(), "the input stays where it was"
    assert (signer.settings.storage_root / "error" / job_id / name).exists(), \
        "the staged copy is kept in error/<job>/"
    assert not (signer.settings.storage_root / "output").exists() or not any(
        (signer.settings.storage_root / "output").iterdir())


async def test_a_name_too_long_for_the_output_fails_with_its_code_not_as_interrupted(
        signer, monkeypatch):
    # A name an older, looser intake let through: the output write itself fails.
    monkeypatch.setattr(enqueue, "name_problem", lambda name: None)
    result = await signer.enqueue(signer.drop(LONG_NAME, make_pdf()))
    assert result.outcome is Outcome.ENQUEUED
    await _assert_failed_as_itself(signer, result.job_id, LONG_NAME,
                                   SignerErrorCode.OUTPUT_NAME_TOO_LONG)
    job = await signer.repository.get(result.job_id)
    assert job.signing_started_at is not None, "the failure came after the checkpoint"


async def test_a_full_disk_while_sealing_fails_with_storage_full(signer):
    signed = []

    def disk_full(fn, request):
        signed.append(fn)
        if fn is engine.verify_and_seal:
            raise OSError(errno.ENOSPC, "No space left on device")

    signer.executor.before = disk_full
    job_id = (await signer.enqueue(signer.drop("full.pdf", make_pdf()))).job_id
    await _assert_failed_as_itself(signer, job_id, "full.pdf", SignerErrorCode.STORAGE_FULL)
    assert signed == [engine.sign, engine.verify_and_seal], "signed once, never retried"


@pytest.mark.parametrize("name", ["n" * 246 + ".pdf", "fatura\u202efdp.exe.pdf"])
@pytest.mark.parametrize("source", [JobSource.WATCHER, JobSource.RESCAN])
async def test_a_dropped_file_with_a_name_that_cannot_be_carried_is_born_failed(
        signer, name, source):
    path = signer.drop(name, make_pdf())
    result = await signer.enqueue(path, source=source)
    assert (result.outcome, result.code) == (Outcome.INVALID_NAME,
                                             SignerErrorCode.INPUT_INVALID_NAME)
    job = await signer.repository.get(result.job_id)
    assert (job.status, job.error_code) == (JobStatus.FAILED.value, "input.invalid-name")
    assert not path.exists(), "not offered again"
    kept = signer.settings.storage_root / "error" / job.id / name
    assert kept.read_bytes() == make_pdf(), "not lost: where the operator looks"
    [event] = await signer.events("InvalidFileName")
    assert event.properties["movedTo"] == str(kept) and event.properties["folder"] == "inbox"


async def test_a_retry_of_a_name_that_cannot_be_carried_is_refused(signer):
    path = signer.drop("n" * 246 + ".pdf", make_pdf())
    result = await signer.enqueue(path, source=JobSource.RETRY)
    assert (result.outcome, result.code) == (Outcome.REFUSED, SignerErrorCode.INPUT_INVALID_NAME)
    assert path.exists() and await signer.repository.latest_for_path(str(path)) is None


@pytest.mark.parametrize("network_error", [
    OSError(errno.EHOSTUNREACH, "No route to host"),
    socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"),
])
async def test_a_network_oserror_of_the_store_is_retried_not_failed_as_storage(
        signer, monkeypatch, network_error):
    # The store's driver raises these raw (not ConnectionError): they are the network's.
    note = signer.repository.note
    raised = []

    async def unreachable_once(job_id, message, **kwargs):
        if message.startswith("Signing (") and not raised:
            raised.append(message)
            raise network_error
        return await note(job_id, message, **kwargs)

    monkeypatch.setattr(signer.repository, "note", unreachable_once)
    signed = []
    signer.executor.before = lambda fn, request: signed.append(fn)
    job_id = (await signer.enqueue(signer.drop("net.pdf", make_pdf()))).job_id
    job = await signer.wait_for(job_id)
    assert (job.status, job.error_code) == (JobStatus.COMPLETED.value, None)
    assert raised, "the store failed once"
    assert signed == [engine.sign, engine.verify_and_seal], "signed once, after the retry"
