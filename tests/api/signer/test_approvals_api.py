"""The approvers' API: their own tokens, one decision each, only while a job can be decided."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy import update
from sqlmodel import select

from activities.signer.approvals.store import ApprovalStore
from activities.signer.approvals.tokens import token_hash
from activities.signer.contracts.approvals import ApprovalState
from activities.signer.models.approvals import ApproverToken, Cnab240Line, JobApproval
from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository
from shared.db.models import OperationalEvent
from tests.api.conftest import API_KEY

AUTH = {"X-API-Key": API_KEY}
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


@pytest.fixture(autouse=True)
def _own_task_queues(settings):
    settings.pipeline.task_queue_suffix = f"-api-{uuid.uuid4().hex[:8]}"


async def _held(api, quorum: int = 2) -> tuple[str, dict[str, str]]:
    """A job AwaitingApproval with tokens for Ana and Bruno."""
    inbox = api.context.settings.storage_root / "input" / "inbox"
    job = Job(id=str(uuid.uuid4()), file_name="folha.rem",
              original_path=str(inbox / f"{uuid.uuid4()}.rem"), source="watcher",
              profile_name="default", format="Cades", status="AwaitingApproval",
              folder="inbox")
    await JobRepository(api.context.sessions).insert(job, "test row")
    tokens = {"Ana": f"ana-{uuid.uuid4()}", "Bruno": f"bruno-{uuid.uuid4()}"}
    async with api.context.sessions() as session:
        session.add(JobApproval(job_id=job.id, profile_name="default", rule={"quorum": quorum},
                                quorum=quorum, staged_path="/nowhere", staged_size=1,
                                staged_sha256="0" * 64, state="Waiting"))
        for name, token in tokens.items():
            session.add(ApproverToken(token_sha256=token_hash(token), job_id=job.id,
                                      approver=name, email=f"{name.lower()}@example.com"))
        await session.commit()
    return job.id, tokens


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_an_approver_decides_once_with_their_own_token(api):
    job_id, tokens = await _held(api)
    answer = await api.post(f"/api/approvals/{job_id}/approve", headers=_bearer(tokens["Ana"]))
    assert answer.status_code == 200, answer.text
    assert answer.json()["decision"] == "Approved" and answer.json()["email"] == \
        "a***a@example.com"
    again = await api.post(f"/api/approvals/{job_id}/reject", json={"reason": "changed mind"},
                           headers=_bearer(tokens["Ana"]))
    assert (again.status_code, again.json()["code"]) == (409, "approval.already-decided")
    seen = (await api.get(f"/api/approvals/{job_id}", headers=_bearer(tokens["Bruno"]))).json()
    assert seen["you"] == "Bruno" and [d["approver"] for d in seen["decisions"]] == ["Ana"]
    events = (await api.get("/api/events", params={"type": "ApprovalDecided"},
                            headers=AUTH)).json()["items"]
    assert [e["message"] for e in events] == [
        f"Approval decided: Ana (a***a@example.com) approved job {job_id} ('folha.rem')."]


async def test_decisions_need_the_approvers_own_token_for_this_job(api):
    job_id, _ = await _held(api)
    # The operator's API key is not an approver's credential.
    for headers in ({}, {"Authorization": "Bearer not-a-token"},
                    {"Authorization": "Basic abc"}, {"X-API-Key": API_KEY}):
        answer = await api.post(f"/api/approvals/{job_id}/approve", headers=headers)
        assert (answer.status_code, answer.json()["code"]) == (401, "approval.invalid-token")
    _other, tokens = await _held(api)
    answer = await api.post(f"/api/approvals/{job_id}/approve",
                            headers=_bearer(tokens["Ana"]))
    assert (answer.status_code, answer.json()["code"]) == (403, "approval.forbidden")


async def test_a_rejection_needs_a_reason_and_is_a_veto(api):
    job_id, tokens = await _held(api)
    bare = await api.post(f"/api/approvals/{job_id}/reject", headers=_bearer(tokens["Ana"]))
    assert (bare.status_code, bare.json()["code"]) == (422, "request.invalid")
    vetoed = await api.post(f"/api/approvals/{job_id}/reject", json={"reason": "valor errado"},
                            headers=_bearer(tokens["Ana"]))
    assert vetoed.status_code == 200
    late = await api.post(f"/api/approvals/{job_id}/approve", headers=_bearer(tokens["Bruno"]))
    assert (late.status_code, late.json()["code"]) == (409, "approval.not-awaiting")
    view = (await api.get(f"/api/jobs/{job_id}/approval", headers=AUTH)).json()
    assert view["approvalState"] == "Rejected"
    assert view["decisions"][0]["reason"] == "valor errado"


async def test_a_sealed_job_can_no_longer_be_decided(api):
    job_id, tokens = await _held(api)
    async with api.context.sessions() as session:
        await session.exec(update(JobApproval).where(JobApproval.job_id == job_id)
                           .values(state="Sealed"))
        await session.commit()
    answer = await api.post(f"/api/approvals/{job_id}/reject", json={"reason": "too late"},
                            headers=_bearer(tokens["Bruno"]))
    assert (answer.status_code, answer.json()["code"]) == (409, "approval.not-awaiting")
    async with api.context.sessions() as session:
        assert (await session.exec(select(OperationalEvent).where(
            OperationalEvent.type == "ApprovalDecided"))).all() == []


@SQLITE_ONLY
async def test_operator_views_need_the_api_key_and_show_the_cnab240_lines(api):
    job_id, _ = await _held(api)
    async with api.context.sessions() as session:
        session.add(Cnab240Line(job_id=job_id, line_no=3, record_type="3", segment="A",
                                movement="0", amount_cents=1000))
        await session.commit()
    assert (await api.get(f"/api/jobs/{job_id}/approval")).status_code == 401
    lines = (await api.get(f"/api/jobs/{job_id}/cnab240", headers=AUTH)).json()["lines"]
    assert lines == [{"line": 3, "recordType": "3", "segment": "A", "movement": "0",
                      "amountCents": 1000, "paymentDate": None}]
    missing = await api.get(f"/api/jobs/{uuid.uuid4()}/cnab240", headers=AUTH)
    assert (missing.status_code, missing.json()["code"]) == (404, "job.not-found")


@SQLITE_ONLY
async def test_deleting_or_clearing_jobs_removes_their_approval_evidence(api):
    job_id, tokens = await _held(api)
    await api.post(f"/api/approvals/{job_id}/approve", headers=_bearer(tokens["Ana"]))
    await api.context.faces.signer.jobs.delete(job_id, actor="op", reason="duplicado")
    async with api.context.sessions() as session:
        [deleted] = (await session.exec(select(OperationalEvent).where(
            OperationalEvent.type == "JobDeleted"))).all()
        assert await session.get(JobApproval, job_id) is None
    assert "('folha.rem', AwaitingApproval, canceled to delete it)" in deleted.message
    assert " Approvals: Approved by Ana (a***a@example.com) at " in deleted.message
    assert deleted.message.endswith(". Reason: duplicado.")
    other, tokens = await _held(api)
    await api.post(f"/api/approvals/{other}/approve", headers=_bearer(tokens["Bruno"]))
    assert (await api.delete("/api/jobs", headers=AUTH)).status_code == 200
    async with api.context.sessions() as session:
        assert (await session.exec(select(JobApproval))).all() == []
        assert (await session.exec(select(ApproverToken))).all() == []


@SQLITE_ONLY
async def test_an_approval_block_is_validated_and_editable_on_a_profile(api):
    unreachable = await api.post("/api/profiles", headers=AUTH, json={
        "name": "folha", "approval": {"approvers": [{"name": "Ana", "email": "ana@x.com"}],
                                      "quorum": 2}})
    assert (unreachable.status_code, unreachable.json()["code"]) == (422, "profile.invalid")
    assert "quorum 2 is more than the 1 approver(s)" in unreachable.json()["message"]
    created = await api.post("/api/profiles", headers=AUTH, json={
        "name": "folha", "check_cnab240_payment_dates": False,
        "approval": {"approvers": [{"name": "Ana", "email": "ana@x.com"},
                                   {"name": "Bia", "email": "bia@x.com"}],
                     "quorum": 2, "expires_after_seconds": 86400}})
    assert created.status_code == 201, created.text
    assert created.json()["approval"]["quorum"] == 2
    assert created.json()["checkCnab240PaymentDates"] is False
    edited = await api.patch("/api/profiles/folha", headers=AUTH, json={"approval": None})
    assert edited.status_code == 200 and edited.json()["approval"] is None


async def test_a_rejection_the_seal_overtakes_after_its_read_is_a_409_not_a_500(api,
                                                                                monkeypatch):
    # The race above, made certain: the seal commits between the rejection's read and its
    # conditional write. The loser's answer then reads what won, after its rollback.
    from activities.signer.approvals import decisions

    job_id, tokens = await _held(api, quorum=1)
    store = ApprovalStore(api.context.sessions)
    async with api.context.sessions() as session:
        await session.exec(update(JobApproval).where(JobApproval.job_id == job_id)
                           .values(state="Released"))
        await session.commit()
    conditional_write = decisions.move_approval

    async def sealed_first(*args, **kwargs):
        assert await store.mark(job_id, [ApprovalState.RELEASED], ApprovalState.SEALED)
        return await conditional_write(*args, **kwargs)

    monkeypatch.setattr(decisions, "move_approval", sealed_first)
    answer = await api.post(f"/api/approvals/{job_id}/reject", json={"reason": "stop"},
                            headers=_bearer(tokens["Bruno"]))
    assert answer.status_code == 409, answer.text
    assert answer.json()["code"] == "approval.not-awaiting"
    assert "approval Sealed" in answer.json()["message"]
    assert await store.rejection(job_id) is None


async def test_a_late_rejection_and_the_seal_before_signing_have_one_winner(api):
    store = ApprovalStore(api.context.sessions)
    for _ in range(4):
        job_id, tokens = await _held(api, quorum=1)
        async with api.context.sessions() as session:
            await session.exec(update(JobApproval).where(JobApproval.job_id == job_id)
                               .values(state="Released"))
            await session.commit()
        sealed, answer = await asyncio.gather(
            store.mark(job_id, [ApprovalState.RELEASED], ApprovalState.SEALED),
            api.post(f"/api/approvals/{job_id}/reject", json={"reason": "stop"},
                     headers=_bearer(tokens["Bruno"])))
        assert sealed != (answer.status_code == 200), answer.text
        state = (await store.get(job_id)).state
        assert state == ("Sealed" if sealed else "Rejected")
        if sealed:
            assert answer.json()["code"] == "approval.not-awaiting"
            assert await store.rejection(job_id) is None, "the loser records nothing"
