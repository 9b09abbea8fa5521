"""Approvals on real Temporal, store, files and SMTP: quorum, veto, expiry, content, CNAB240."""

from __future__ import annotations

import asyncio
import os
import re
import stat
import time
from dataclasses import dataclass
from datetime import date

import pytest
import pytest_asyncio
from sqlmodel import select
from temporalio.client import WorkflowFailureError
from temporalio.worker import Worker

from activities.signer.approvals import decisions
from activities.signer.approvals.wiring import approval_parts
from activities.signer.contracts.approvals import Decision
from activities.signer.contracts.jobs import JobResult, JobStatus, job_workflow_id, task_queues
from activities.signer.contracts.names import APPROVAL_DECIDED_SIGNAL
from activities.signer.crypto.samples import make_pdf, make_remittance
from activities.signer.models.approvals import Cnab240Line, NotificationOutbox
from services.dev.smtp_sink import SmtpSink
from shared.errors import EsteiraError

TODAY = date(2030, 1, 10)
# Store-sensitive races run on both backends; file and clock rules once, to keep CI short.
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])
APPROVERS = [{"name": "Ana", "email": "ana@example.com"},
             {"name": "Bruno", "email": "bruno@example.com"},
             {"name": "Carla", "email": "carla@example.com"}]


@dataclass
class Approvals:
    """The signer harness plus the approval activities and an SMTP sink."""

    signer: object
    sink: SmtpSink
    client: object

    async def require(self, quorum: int = 2, expires: float | None = None, **profile) -> None:
        async with self.signer.sessions() as session:
            row = await self.signer.profile()
            row.approval = {"approvers": APPROVERS, "quorum": quorum,
                            "expires_after_seconds": expires}
            for key, value in profile.items():
                setattr(row, key, value)
            session.add(row)
            await session.commit()

    async def tokens(self, count: int = 3, timeout: float = 20) -> dict[str, str]:
        """Approver name -> token, read from the e-mails the sink received."""
        deadline = time.monotonic() + timeout
        while len(self.sink.messages) < count and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        found = {}
        for message in self.sink.messages:
            body = message.get_content()
            # The link to the approver's page carries the token in its fragment.
            found[body.split(",", 1)[0]] = re.search(r"/approve/[\w-]+#([\w-]+)",
                                                     body).group(1)
        assert len(found) == count, found
        return found

    async def decide(self, job_id: str, token: str, decision: Decision,
                     reason: str | None = None):
        approver = await decisions.authenticate(self.signer.sessions, token, job_id)
        return await decisions.decide(self.signer.sessions, self.client, approver, decision,
                                      reason)


@pytest_asyncio.fixture
async def approvals(signer, temporal_env):
    with SmtpSink() as sink:
        signer.settings.notifications.smtp_host = "127.0.0.1"
        signer.settings.notifications.smtp_port = sink.port
        checks, steps = approval_parts(signer.settings, signer.repository, signer.storage,
                                       signer.activities.encryption_key)
        checks.today = lambda: TODAY
        signer.activities.checks = checks
        jobs_queue, _ = task_queues(signer.settings.pipeline.task_queue_suffix)
        async with Worker(temporal_env.client, task_queue=jobs_queue, activities=steps.all()):
            yield Approvals(signer, sink, temporal_env.client)


async def _eventually(check, timeout: float = 20) -> None:
    """The file moves follow the committed transition; wait for them."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.05)


async def _history_until(signer, job_id: str, text: str, timeout: float = 20) -> list:
    """The job's history once a row containing `text` was written."""
    deadline = time.monotonic() + timeout
    while True:
        history = await signer.history(job_id)
        if any(text in h.message for h in history):
            return history
        assert time.monotonic() < deadline, f"no history row with {text!r}"
        await asyncio.sleep(0.05)


async def _held(approvals: Approvals, name: str, data: bytes) -> tuple[str, object]:
    signer = approvals.signer
    job_id = (await signer.enqueue(signer.drop(name, data))).job_id
    job = await signer.wait_for(job_id, {JobStatus.AWAITING_APPROVAL.value,
                                         *(s.value for s in (JobStatus.FAILED,
                                                             JobStatus.COMPLETED))})
    assert job.status == JobStatus.AWAITING_APPROVAL.value, job.error_message
    return job_id, job


async def test_a_quorum_of_two_of_three_releases_the_job_which_is_then_signed(approvals):
    signer = approvals.signer
    await approvals.require(quorum=2)
    job_id, _ = await _held(approvals, "contrato.pdf", make_pdf())
    staged = signer.storage.staging_dir(job_id) / "contrato.pdf"
    assert staged.exists() and (signer.inbox / "contrato.pdf").exists()
    tokens = await approvals.tokens()
    assert sorted(m["To"] for m in approvals.sink.messages) == sorted(
        a["email"] for a in APPROVERS)
    await approvals.decide(job_id, tokens["Ana"], Decision.APPROVED)
    await asyncio.sleep(0.5)
    assert (await signer.repository.get(job_id)).status == JobStatus.AWAITING_APPROVAL.value
    await approvals.decide(job_id, tokens["Bruno"], Decision.APPROVED)
    job = await signer.wait_for(job_id)
    assert job.status == JobStatus.COMPLETED.value, job.error_message
    assert not (signer.inbox / "contrato.pdf").exists()
    statuses = [h.to_status for h in await signer.history(job_id) if h.to_status]
    assert statuses == ["Queued", "Processing", "AwaitingApproval", "Queued", "Processing",
                        "Verifying", "Completed"]
    events = await signer.events("ApprovalDecided")
    assert [e.properties["email"] for e in events] == ["a***a@example.com", "b***o@example.com"]


async def test_one_rejection_after_an_approval_vetoes_and_returns_the_file(approvals):
    signer = approvals.signer
    await approvals.require(quorum=2)
    data = make_remittance()
    job_id, _ = await _held(approvals, "folha.rem", data)
    tokens = await approvals.tokens()
    await approvals.decide(job_id, tokens["Ana"], Decision.APPROVED)
    await approvals.decide(job_id, tokens["Bruno"], Decision.REJECTED, "valor errado")
    job = await signer.wait_for(job_id)
    assert job.status == JobStatus.CANCELED.value
    assert job.error_message == "Rejected by Bruno: valor errado."
    returned = signer.storage.output / "folha.reject.rem"
    assert returned.read_bytes() == data and job.output_path == str(returned)
    assert not (signer.inbox / "folha.rem").exists(), "the original leaves input/"
    assert not signer.storage.staging_dir(job_id).exists()
    with pytest.raises(EsteiraError) as late:
        await approvals.decide(job_id, tokens["Carla"], Decision.APPROVED)
    assert late.value.code == "approval.not-awaiting"


@SQLITE_ONLY
async def test_a_taken_reject_name_overwrites_nothing_and_keeps_the_input(approvals):
    signer = approvals.signer
    await approvals.require(quorum=1)
    signer.storage.output.mkdir(parents=True, exist_ok=True)
    (signer.storage.output / "folha.reject.rem").write_bytes(b"someone else's")
    data = make_remittance()
    job_id, _ = await _held(approvals, "folha.rem", data)
    tokens = await approvals.tokens()
    await approvals.decide(job_id, tokens["Carla"], Decision.REJECTED, "não")
    job = await signer.wait_for(job_id)
    assert job.status == JobStatus.CANCELED.value
    assert (signer.storage.output / "folha.reject.rem").read_bytes() == b"someone else's"
    assert (signer.storage.error / job_id / "folha.rem").read_bytes() == data
    assert (signer.inbox / "folha.rem").read_bytes() == data


async def _released_while_paused(approvals: Approvals, name: str, data: bytes
                                  ) -> tuple[str, dict[str, str]]:
    """A job that reached its quorum while the pipeline is paused: Queued, not yet claimed."""
    signer = approvals.signer
    await approvals.require(quorum=2)
    job_id, _ = await _held(approvals, name, data)
    tokens = await approvals.tokens()
    await signer.set_paused(True)
    await approvals.decide(job_id, tokens["Ana"], Decision.APPROVED)
    await approvals.decide(job_id, tokens["Bruno"], Decision.APPROVED)
    await signer.wait_for(job_id, {JobStatus.QUEUED.value})
    return job_id, tokens


async def test_a_rejection_after_the_claim_fails_the_job_for_good(approvals):
    signer = approvals.signer
    await approvals.require(quorum=2)
    data = make_remittance()
    job_id, _ = await _held(approvals, "folha.rem", data)
    tokens = await approvals.tokens()
    checks = signer.activities.checks
    held_copy = checks.held_copy

    async def reject_once_claimed(job):
        # The released job's claim is committed; Carla's veto lands before the seal.
        assert (await signer.repository.get(job.id)).status == JobStatus.PROCESSING.value
        await approvals.decide(job_id, tokens["Carla"], Decision.REJECTED, "late veto")
        return await held_copy(job)

    checks.held_copy = reject_once_claimed
    await approvals.decide(job_id, tokens["Ana"], Decision.APPROVED)
    await approvals.decide(job_id, tokens["Bruno"], Decision.APPROVED)
    job = await signer.wait_for(job_id)
    assert (job.status, job.error_code) == (JobStatus.FAILED.value, "approval.rejected")
    assert (signer.storage.output / "folha.reject.rem").read_bytes() == data
    assert not (signer.inbox / "folha.rem").exists()
    with pytest.raises(EsteiraError) as refused:
        await signer.face.jobs.retry(job_id)
    assert (refused.value.code, refused.value.status) == ("job.rejected-not-retriable", 409)


async def test_a_rejection_before_the_released_job_is_claimed_is_an_ordinary_veto(approvals):
    signer = approvals.signer
    data = make_remittance()
    job_id, tokens = await _released_while_paused(approvals, "folha.rem", data)
    await approvals.decide(job_id, tokens["Carla"], Decision.REJECTED, "veto na fila")
    await signer.set_paused(False)
    job = await signer.wait_for(job_id)
    assert (job.status, job.error_code) == (JobStatus.CANCELED.value, None)
    assert job.error_message == "Rejected by Carla: veto na fila."
    returned = signer.storage.output / "folha.reject.rem"
    assert returned.read_bytes() == data and job.output_path == str(returned)
    assert not (signer.inbox / "folha.rem").exists(), "the original leaves input/"
    assert not signer.storage.staging_dir(job_id).exists()
    history = await signer.history(job_id)
    assert [h.to_status for h in history if h.to_status][-2:] == ["Queued", "Canceled"], \
        "never claimed for signing"
    assert history[-1].code == "approval.rejected"
    with pytest.raises(EsteiraError) as refused:
        await signer.face.jobs.retry(job_id)
    assert (refused.value.code, refused.value.status) == ("job.not-failed", 409)


@SQLITE_ONLY
async def test_an_operator_cancel_racing_the_queued_veto_has_one_winner(approvals):
    signer = approvals.signer
    job_id, tokens = await _released_while_paused(approvals, "folha.rem", make_remittance())
    await approvals.decide(job_id, tokens["Carla"], Decision.REJECTED, "não")
    store = signer.activities.checks.approvals
    end_wait = store.end_wait

    async def operator_first(job_id, **kwargs):
        # The operator's cancel commits between the file's return and the veto's transition.
        await signer.face.jobs.cancel(job_id, reason="já resolvido", actor="test")
        return await end_wait(job_id, **kwargs)

    store.end_wait = operator_first
    await signer.set_paused(False)
    history = await _history_until(signer, job_id, "Rejected file returned to")
    canceled = [h for h in history if h.to_status == JobStatus.CANCELED.value]
    assert [h.message for h in canceled] == ["Operator canceled: já resolvido."]


@SQLITE_ONLY
async def test_the_window_expires_on_the_wall_clock_even_while_paused(approvals):
    signer = approvals.signer
    await approvals.require(quorum=2, expires=2.0)
    job_id, _ = await _held(approvals, "contrato.pdf", make_pdf())
    await signer.set_paused(True)
    job = await signer.wait_for(job_id, timeout=20)
    assert job.status == JobStatus.CANCELED.value
    assert job.error_message == "Approval window expired."
    await _eventually(lambda: (signer.storage.error / job_id).exists())
    assert (signer.storage.error / job_id / "contrato.pdf").exists()
    assert (signer.inbox / "contrato.pdf").exists()
    [event] = await signer.events("ApprovalExpired")
    assert event.properties["jobId"] == job_id


@SQLITE_ONLY
async def test_a_staged_copy_changed_during_the_wait_is_not_signed(approvals):
    signer = approvals.signer
    await approvals.require(quorum=1)
    job_id, _ = await _held(approvals, "contrato.pdf", make_pdf())
    staged = signer.storage.staging_dir(job_id) / "contrato.pdf"
    assert stat.S_IMODE(staged.stat().st_mode) == 0o444, "held copy is read-only"
    os.chmod(staged, 0o644)
    staged.write_bytes(make_pdf(pages=2))
    tokens = await approvals.tokens()
    await approvals.decide(job_id, tokens["Ana"], Decision.APPROVED)
    job = await signer.wait_for(job_id)
    assert (job.status, job.error_code) == (JobStatus.FAILED.value, "approval.content-changed")
    assert not list(signer.storage.output.glob("contrato*"))
    assert (signer.inbox / "contrato.pdf").exists()


@SQLITE_ONLY
async def test_payment_dates_are_checked_before_signing(approvals):
    signer = approvals.signer
    files = {"passed.rem": [("A", "20012030", "0"), ("J", "09012030", "0")],
             "today.rem": [("A", "10012030", "0"), ("O", "11012030", "0")],
             "nodate.rem": [("A", "00000000", "0"), ("N", "08012030", "9")]}
    jobs = {name: (await signer.enqueue(signer.drop(name, make_remittance(payments=rows))))
            .job_id for name, rows in files.items()}
    done = {name: await signer.wait_for(job_id) for name, job_id in jobs.items()}
    assert {name: (job.status, job.error_code) for name, job in done.items()} == {
        "passed.rem": ("Failed", "cnab240.payment-date-passed"),
        "today.rem": ("Completed", None), "nodate.rem": ("Completed", None)}
    failed = done["passed.rem"]
    assert failed.error_message.startswith("Payment date 09/01/2030 on line 4 is before")
    assert (signer.inbox / "passed.rem").exists(), "nothing is lost"
    [event] = await signer.events("Cnab240PaymentDatePassed")
    assert (event.properties["jobId"], event.properties["line"]) == (failed.id, 4)
    async with signer.sessions() as session:
        lines = (await session.exec(select(Cnab240Line).where(
            Cnab240Line.job_id == failed.id).order_by(Cnab240Line.line_no))).all()
    assert [(r.line_no, r.segment, r.payment_date) for r in lines if r.segment] == [
        (3, "A", date(2030, 1, 20)), (4, "J", date(2030, 1, 9))]


@SQLITE_ONLY
async def test_a_malformed_payment_file_fails_with_its_line_number(approvals):
    signer = approvals.signer
    lines = make_remittance(records=6).decode("ascii").split("\r\n")
    lines[3] = lines[3][:239]
    data = "\r\n".join(lines).encode("ascii")
    job_id = (await signer.enqueue(signer.drop("pagto.rem", data))).job_id
    job = await signer.wait_for(job_id)
    assert (job.status, job.error_code) == ("Failed", "cnab240.malformed")
    assert "line 4: record has 239 characters" in job.error_message
    assert (signer.inbox / "pagto.rem").read_bytes() == data


@SQLITE_ONLY
async def test_a_released_job_goes_through_the_payment_date_check_again(approvals):
    signer = approvals.signer
    await approvals.require(quorum=1)
    job_id, _ = await _held(approvals, "pagto.rem",
                            make_remittance(payments=[("A", "10012030", "0")]))
    # The approvers took a day: what was due today is now past.
    signer.activities.checks.today = lambda: date(2030, 1, 11)
    tokens = await approvals.tokens()
    await approvals.decide(job_id, tokens["Bruno"], Decision.APPROVED)
    job = await signer.wait_for(job_id)
    assert (job.status, job.error_code) == ("Failed", "cnab240.payment-date-passed")


@SQLITE_ONLY
async def test_a_cancel_the_workflow_learns_from_the_store_still_moves_the_held_copy(approvals):
    # cancel_job commits Canceled, then asks the workflow to stop. A tally between the two (or
    # a lost cancel request) ends the wait from the store: the copy must not stay in staging.
    signer = approvals.signer
    await approvals.require(quorum=2)
    job_id, _ = await _held(approvals, "contrato.pdf", make_pdf())
    assert await signer.repository.transition(job_id, [JobStatus.AWAITING_APPROVAL],
                                              JobStatus.CANCELED, "Operator canceled.")
    handle = approvals.client.get_workflow_handle(job_workflow_id(job_id), result_type=JobResult)
    await handle.signal(APPROVAL_DECIDED_SIGNAL)  # the next tally, now rather than in 5 min
    assert (await handle.result()).status == JobStatus.CANCELED
    assert (signer.storage.error / job_id / "contrato.pdf").exists()
    assert not (signer.storage.staging_dir(job_id) / "contrato.pdf").exists()
    assert (signer.inbox / "contrato.pdf").exists()
    notes = [h.message for h in await signer.history(job_id)]
    assert any(note.startswith("Staged copy moved to ") for note in notes), notes


@SQLITE_ONLY
async def test_a_released_job_canceled_before_its_claim_still_moves_the_held_copy(
        approvals, monkeypatch):
    # Released by the quorum, then canceled while Queued; the workflow's cancel request is lost,
    # so the job's own claim is where the workflow learns of it.
    signer = approvals.signer
    await approvals.require(quorum=2)
    job_id, _ = await _held(approvals, "contrato.pdf", make_pdf())
    claim = signer.repository.claim

    async def canceled_first(claimed_id: str, *args, **kwargs):
        await signer.repository.transition(claimed_id, [JobStatus.QUEUED], JobStatus.CANCELED,
                                           "Operator canceled.")
        return await claim(claimed_id, *args, **kwargs)

    monkeypatch.setattr(signer.repository, "claim", canceled_first)
    tokens = await approvals.tokens()
    for name in ("Ana", "Bruno"):
        await approvals.decide(job_id, tokens[name], Decision.APPROVED)
    handle = approvals.client.get_workflow_handle(job_workflow_id(job_id), result_type=JobResult)
    assert (await handle.result()).status == JobStatus.CANCELED
    assert (signer.storage.error / job_id / "contrato.pdf").exists()
    assert not (signer.storage.staging_dir(job_id) / "contrato.pdf").exists()
    statuses = [h.to_status for h in await signer.history(job_id) if h.to_status]
    assert statuses == ["Queued", "Processing", "AwaitingApproval", "Queued", "Canceled"]


@SQLITE_ONLY
async def test_a_cancel_before_the_hold_reaches_the_workflow_still_moves_the_held_copy(
        approvals, monkeypatch):
    # The signing activity holds the job (AwaitingApproval, copy staged) and then answers; an
    # operator's cancel in between reaches the workflow first, and the workflow doesn't wait
    # for the activity's answer.
    signer = approvals.signer
    await approvals.require(quorum=2)
    held, answer = asyncio.Event(), asyncio.Event()
    before_signing = signer.activities.checks.before_signing

    async def hold_then_wait(*args, **kwargs):
        result = await before_signing(*args, **kwargs)
        held.set()
        await answer.wait()
        return result

    monkeypatch.setattr(signer.activities.checks, "before_signing", hold_then_wait)
    job_id = (await signer.enqueue(signer.drop("contrato.pdf", make_pdf()))).job_id
    await asyncio.wait_for(held.wait(), 30)
    assert (await signer.repository.get(job_id)).status == JobStatus.AWAITING_APPROVAL
    await signer.face.jobs.cancel(job_id, reason=None, actor="test")
    handle = approvals.client.get_workflow_handle(job_workflow_id(job_id), result_type=JobResult)
    try:
        with pytest.raises(WorkflowFailureError):
            await handle.result()  # canceled, while the activity still hasn't answered
    finally:
        answer.set()
    assert (signer.storage.error / job_id / "contrato.pdf").exists()
    assert not (signer.storage.staging_dir(job_id) / "contrato.pdf").exists()
    assert (signer.inbox / "contrato.pdf").exists()
    notes = [h.message for h in await signer.history(job_id)]
    assert any(note.startswith("Staged copy moved to ") for note in notes), notes


@SQLITE_ONLY
async def test_an_operator_cancel_moves_the_held_copy_to_error(approvals):
    signer = approvals.signer
    await approvals.require(quorum=2)
    job_id, _ = await _held(approvals, "contrato.pdf", make_pdf())
    async with signer.sessions() as session:  # an e-mail the SMTP server never took
        session.add(NotificationOutbox(job_id=job_id, to_address="late@example.com",
                                       subject="Approval", body="token tkn-live-123"))
        await session.commit()
    await signer.face.jobs.cancel(job_id, reason=None, actor="test")
    await _eventually(lambda: (signer.storage.error / job_id / "contrato.pdf").exists())
    assert (signer.inbox / "contrato.pdf").exists()
    assert (await approvals.signer.repository.get(job_id)).status == "Canceled"
    async with signer.sessions() as session:
        bodies = (await session.exec(select(NotificationOutbox.body).where(
            NotificationOutbox.job_id == job_id))).all()
    assert bodies and all(body is None for body in bodies), "no live token stays in the outbox"
