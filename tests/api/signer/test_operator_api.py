"""The signer's operator API: every status and error code, on both stores."""

from __future__ import annotations

import asyncio
import socket
import uuid

import pytest

from activities.signer.crypto.samples import make_pdf
from activities.signer.models.jobs import Job, SigningProfile
from activities.signer.repository import JobRepository
from tests.api.conftest import API_KEY

AUTH = {"X-API-Key": API_KEY}


@pytest.fixture(autouse=True)
def _own_task_queues(settings):
    settings.pipeline.task_queue_suffix = f"-api-{uuid.uuid4().hex[:8]}"


def _inbox(api):
    return api.context.settings.storage_root / "input" / "inbox"


async def _job(api, **fields) -> Job:
    job = Job(id=str(uuid.uuid4()), file_name=fields.pop("file_name", "f.pdf"),
              original_path=fields.pop("original_path", str(_inbox(api) / "f.pdf")),
              source="watcher", profile_name="default", format="Pades",
              status=fields.pop("status", "Queued"), folder="inbox", **fields)
    return await JobRepository(api.context.sessions).insert(job, "test row")


async def test_pause_and_resume_are_idempotent_and_leave_events(api):
    first = await api.post("/api/pipeline/pause", json={"reason": "Manutenção trimestral"},
                           headers=AUTH)
    again = await api.post("/api/pipeline/pause", json={"reason": "x"}, headers=AUTH)
    assert first.status_code == again.status_code == 200
    state = (await api.get("/api/pipeline/state", headers=AUTH)).json()
    assert state["paused"] is True and state["reason"] == "Manutenção trimestral"
    assert (await api.post("/api/pipeline/resume", headers=AUTH)).status_code == 200
    assert (await api.post("/api/pipeline/resume", headers=AUTH)).status_code == 200
    events = (await api.get("/api/events", params={"type": ["PipelinePaused",
                                                           "PipelineResumed"]},
                            headers=AUTH)).json()["items"]
    assert [e["message"] for e in events] == [
        "Pipeline resumed by operator.",
        "Pipeline paused by operator. Reason: Manutenção trimestral."]
    from activities.signer.metrics import PIPELINE_PAUSED

    assert PIPELINE_PAUSED._value.get() == 0


async def test_a_pause_and_a_resume_racing_have_one_winner_and_the_loser_records_nothing(api):
    await api.post("/api/pipeline/pause", json={"reason": "start"}, headers=AUTH)
    for _ in range(5):
        await api.post("/api/pipeline/resume", headers=AUTH)
        answers = await asyncio.gather(
            api.post("/api/pipeline/pause", json={"reason": "a"}, headers=AUTH),
            api.post("/api/pipeline/pause", json={"reason": "b"}, headers=AUTH))
        codes = sorted(a.status_code for a in answers)
        assert codes in ([200, 409], [200, 200])
        for answer in answers:
            if answer.status_code == 409:
                assert answer.json()["code"] == "pipeline.race-lost"
    events = (await api.get("/api/events", params={"type": "PipelinePaused"},
                            headers=AUTH)).json()["items"]
    assert len(events) == 6, "exactly one pause event per round"


async def test_cancel_rules(api):
    queued = await _job(api)
    processing = await _job(api, status="Processing", file_name="p.pdf",
                            original_path=str(_inbox(api) / "p.pdf"))
    canceled = await api.post(f"/api/jobs/{queued.id}/cancel", json={"reason": "wrong batch"},
                              headers=AUTH)
    assert canceled.status_code == 200 and canceled.json()["status"] == "Canceled"
    detail = (await api.get(f"/api/jobs/{queued.id}", headers=AUTH)).json()
    assert detail["history"][-1]["message"] == "Operator canceled: wrong batch."
    refused = await api.post(f"/api/jobs/{processing.id}/cancel", headers=AUTH)
    assert (refused.status_code, refused.json()["code"]) == (409, "job.not-queued")
    missing = await api.post(f"/api/jobs/{uuid.uuid4()}/cancel", headers=AUTH)
    assert (missing.status_code, missing.json()["code"]) == (404, "job.not-found")
    plain = await _job(api, file_name="q.pdf", original_path=str(_inbox(api) / "q.pdf"))
    await api.post(f"/api/jobs/{plain.id}/cancel", headers=AUTH)
    detail = (await api.get(f"/api/jobs/{plain.id}", headers=AUTH)).json()
    assert detail["history"][-1]["message"] == "Operator canceled."


async def test_retry_rules(api):
    inbox = _inbox(api)
    (inbox / "f.pdf").write_bytes(make_pdf())
    failed = await _job(api, status="Failed", error_code="document.corrupt")
    retried = await api.post(f"/api/jobs/{failed.id}/retry", headers=AUTH)
    assert retried.status_code == 201
    child = retried.json()
    assert child["parentJobId"] == failed.id and child["status"] == "Queued"
    assert child["id"] != failed.id and child["profile"] == "default"
    assert (await api.get(f"/api/jobs/{failed.id}", headers=AUTH)).json()["children"] == [
        child["id"]]
    cases = [
        (await _job(api, status="Completed", file_name="c.pdf",
                    original_path=str(inbox / "c.pdf")), 409, "job.not-failed"),
        (await _job(api, status="Failed", file_name="gone.pdf",
                    original_path=str(inbox / "gone.pdf")), 409, "job.input-missing"),
        (await _job(api, status="Failed", error_code="approval.rejected", file_name="r.pdf",
                    original_path=str(inbox / "r.pdf")), 409, "job.rejected-not-retriable"),
        (await _job(api, status="Failed", error_code="file.already-processed",
                    file_name="d.pdf", original_path=str(inbox / "d.pdf")), 409,
         "file.already-processed"),
    ]
    for job, status, code in cases:
        answer = await api.post(f"/api/jobs/{job.id}/retry", headers=AUTH)
        assert (answer.status_code, answer.json()["code"]) == (status, code), job.file_name
    missing = await api.post(f"/api/jobs/{uuid.uuid4()}/retry", headers=AUTH)
    assert (missing.status_code, missing.json()["code"]) == (404, "job.not-found")


async def test_upload_queues_with_the_default_profile_and_sanitizes_the_name(api):
    answer = await api.post("/api/files", headers=AUTH,
                            files={"file": ("../../etc/evil.pdf", make_pdf(), "application/pdf")})
    assert answer.status_code == 201, answer.text
    job = answer.json()
    assert job["fileName"] == "evil.pdf" and job["profile"] == "default"
    assert job["source"] == "upload" and job["status"] == "Queued"
    detail = (await api.get(f"/api/jobs/{job['id']}", headers=AUTH)).json()
    assert detail["originalPath"].startswith(str(api.context.settings.storage_root / "uploads"))


async def test_upload_refusals_store_nothing(api):
    settings = api.context.settings
    async def upload(name, data=b"%PDF-1.4", **extra):
        return await api.post("/api/files", headers=AUTH, files={"file": (name, data)}, **extra)

    invalid = await upload("..")
    assert (invalid.status_code, invalid.json()["code"]) == (422, "input.invalid-name")
    settings.upload.max_bytes = 10
    large = await upload("big.pdf", b"x" * 11)
    assert (large.status_code, large.json()["code"]) == (413, "upload.too-large")
    settings.upload.max_bytes = 10_000_000
    unknown = await api.post("/api/files", headers=AUTH, files={"file": ("a.pdf", b"x")},
                             data={"profile": "nope"})
    assert (unknown.status_code, unknown.json()["code"]) == (404, "profile.not-found")
    await _job(api, status="Completed", file_name="done.pdf",
               original_path=str(_inbox(api) / "done.pdf"))
    processed = await upload("DONE.pdf")
    assert (processed.status_code, processed.json()["code"]) == (409, "file.already-processed")
    settings.upload.enabled = False
    disabled = await upload("x.pdf")
    assert (disabled.status_code, disabled.json()["code"]) == (409, "upload.disabled")
    uploads = settings.storage_root / "uploads"
    leftovers = [p for p in uploads.rglob("*") if p.is_file()] if uploads.exists() else []
    assert leftovers == []


async def test_rescan_counts_per_folder_and_requeues_failed_files(api, settings):
    inbox = _inbox(api)
    (inbox / "a.pdf").write_bytes(make_pdf())
    (inbox / "b.pdf").write_bytes(make_pdf())
    (inbox / ".hidden.pdf").write_bytes(b"x")
    await _job(api, status="Failed", file_name="b.pdf", original_path=str(inbox / "b.pdf"))
    await _job(api, status="Completed", file_name="c.pdf", original_path="/elsewhere/c.pdf")
    (inbox / "c.pdf").write_bytes(make_pdf())
    answer = await api.post("/api/rescan", headers=AUTH)
    assert answer.status_code == 200
    [row] = answer.json()["folders"]
    assert (row["folder"], row["scanned"], row["enqueued"], row["alreadyProcessed"]) == (
        "inbox", 3, 2, 1)
    again = (await api.post("/api/rescan?folder=inbox", headers=AUTH)).json()["folders"][0]
    assert again["alreadyActive"] == 2 and again["enqueued"] == 0
    unknown = await api.post("/api/rescan?folder=nope", headers=AUTH)
    assert (unknown.status_code, unknown.json()["code"]) == (404, "folder.not-found")


async def test_rescan_of_an_unassigned_or_unreadable_folder(api):
    async with api.context.sessions() as session:
        profile = await session.get(SigningProfile, "default")
        profile.input_folder = None
        session.add(profile)
        await session.commit()
    body = (await api.post("/api/rescan", headers=AUTH)).json()
    assert body["folders"][0]["unassigned"] is True and body["totals"]["unassigned"] == 1
    async with api.context.sessions() as session:
        profile = await session.get(SigningProfile, "default")
        profile.input_folder = "inbox"
        session.add(profile)
        await session.commit()
    _inbox(api).rmdir()
    answer = await api.post("/api/rescan", headers=AUTH)
    assert answer.status_code == 200
    assert (answer.json()["folders"][0]["errors"], answer.json()["folders"][0]["scanned"]) == (1, 0)


async def test_jobs_list_filters_and_pages_with_a_cursor(api):
    for n in range(7):
        await _job(api, status="Failed" if n % 2 else "Completed", file_name=f"lote-{n}.pdf",
                   original_path=f"/in/lote-{n}.pdf")
    page = (await api.get("/api/jobs", params={"status": "Failed", "limit": 2},
                          headers=AUTH)).json()
    assert [j["fileName"] for j in page["items"]] == ["lote-5.pdf", "lote-3.pdf"]
    rest = (await api.get("/api/jobs", params={"status": "Failed", "limit": 2,
                                                "cursor": page["nextCursor"]},
                          headers=AUTH)).json()
    assert [j["fileName"] for j in rest["items"]] == ["lote-1.pdf"]
    assert rest["nextCursor"] is None
    text = (await api.get("/api/jobs", params={"text": "LOTE-4"}, headers=AUTH)).json()
    assert [j["fileName"] for j in text["items"]] == ["lote-4.pdf"]
    missing = await api.get(f"/api/jobs/{uuid.uuid4()}", headers=AUTH)
    assert (missing.status_code, missing.json()["code"]) == (404, "job.not-found")


async def test_folders_and_profiles(api):
    folders = (await api.get("/api/folders", headers=AUTH)).json()
    assert folders["nextCursor"] is None
    # No watcher has ever passed over it here: never Running, and the reason says so.
    assert folders["items"] == [{"name": "inbox", "path": str(_inbox(api)),
                                 "status": "NoSignal", "profileName": "default",
                                 "lastError": "no watcher has ever reported on this folder: the "
                                              "watcher process is not running here (or is "
                                              "still starting)",
                                 "lastScanAt": None, "instance": socket.gethostname()}]
    [profile] = (await api.get("/api/profiles", headers=AUTH)).json()["items"]
    assert profile["name"] == "default" and profile["inputFolder"] == "inbox"
    assert "password" not in str(profile).lower().replace("pfxpasswordenv", "")


async def test_every_signer_route_needs_the_key(api):
    for method, path in [("post", "/api/pipeline/pause"), ("get", "/api/jobs"),
                         ("post", "/api/files"), ("post", "/api/rescan"),
                         ("get", "/api/events"), ("get", "/api/folders")]:
        answer = await getattr(api, method)(path)
        assert answer.status_code == 401, path


async def test_metrics_show_the_queue_depth_from_the_store(api):
    await _job(api)
    await _job(api, file_name="g.pdf", original_path=str(_inbox(api) / "g.pdf"))
    text = (await api.get("/api/metrics")).text
    assert 'bulksigner_queue_depth{status="Queued"} 2.0' in text
    assert 'bulksigner_queue_depth{status="Processing"} 0.0' in text


async def test_a_job_whose_history_holds_a_note_reads_with_its_note(api):
    # A note is a history row without a status change (`to` is null): the typed answer of
    # GET /api/jobs/{id} once refused it with a 500.
    job = await _job(api)
    await JobRepository(api.context.sessions).note(job.id, "Aguardando o signatário.")
    answer = await api.get(f"/api/jobs/{job.id}", headers=AUTH)
    assert answer.status_code == 200, answer.text
    assert answer.json()["history"][-1] == {**answer.json()["history"][-1], "to": None,
                                            "message": "Aguardando o signatário."}
