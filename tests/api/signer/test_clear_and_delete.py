"""Clear Jobs and deleting one job: what is removed, what is kept, what the trail says."""

from __future__ import annotations

import uuid

import pytest
from sqlmodel import select

from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree, fingerprint_of
from shared.db.models import OperationalEvent
from shared.errors import EsteiraError
from tests.api.conftest import API_KEY

AUTH = {"X-API-Key": API_KEY}


def _storage(api) -> StorageTree:
    return StorageTree(api.context.settings.storage_root)


async def _job(api, name: str, status: str, **fields) -> Job:
    inbox = api.context.settings.storage_root / "input" / "inbox"
    job = Job(id=str(uuid.uuid4()), file_name=name, original_path=str(inbox / name),
              source=fields.pop("source", "watcher"), profile_name="default", format="Pades",
              status=status, folder="inbox", **fields)
    return await JobRepository(api.context.sessions).insert(job, "test row")


async def _events(api) -> list[OperationalEvent]:
    async with api.context.sessions() as session:
        return list((await session.exec(select(OperationalEvent))).all())


async def test_clear_jobs_removes_every_job_its_files_and_older_events(api):
    storage = _storage(api)
    storage.ensure()
    output = storage.output / "done.signed.pdf"
    output.write_bytes(b"signed")
    done = await _job(api, "done.pdf", "Completed", output_path=str(output))
    failed = await _job(api, "bad.pdf", "Failed")
    (storage.error / failed.id).mkdir()
    (storage.error / failed.id / "bad.pdf").write_bytes(b"x")
    queued = await _job(api, "wait.pdf", "Queued", parent_job_id=failed.id)
    queued_input = storage.root / "input" / "inbox" / "wait.pdf"
    queued_input.write_bytes(b"%PDF")
    await api.post("/api/pipeline/pause", json={"reason": "before"}, headers=AUTH)
    answer = await api.delete("/api/jobs", headers=AUTH)
    assert answer.status_code == 200
    body = answer.json()
    assert (body["deleted"], body["filesDeleted"], body["foldersDeleted"],
            body["itemsFailed"]) == (3, 2, 1, 0)
    assert body["eventsDeleted"] >= 1
    assert body["message"].startswith("Cleared 3 job record(s), 2 file(s), 1 folder(s) and ")
    assert not output.exists() and not queued_input.exists()
    assert not (storage.error / failed.id).exists()
    assert (await api.get("/api/jobs", headers=AUTH)).json()["items"] == []
    [event] = await _events(api)
    assert event.type == "JobsCleared" and event.actor == "api-key"
    assert event.properties["deleted"] == 3
    assert done.id and queued.id


async def test_clear_jobs_refuses_when_the_storage_is_unreachable(api):
    await _job(api, "a.pdf", "Completed")
    root = api.context.settings.storage_root
    root.rename(root.with_name("moved"))
    answer = await api.delete("/api/jobs", headers=AUTH)
    assert answer.status_code == 503
    assert len((await api.get("/api/jobs", headers=AUTH)).json()["items"]) == 1


async def test_deleting_a_completed_job_removes_its_output_and_keeps_a_changed_input(api):
    storage = _storage(api)
    storage.ensure()
    source = storage.root / "input" / "inbox" / "doc.pdf"
    source.write_bytes(b"original")
    fingerprint = fingerprint_of(source)
    source.write_bytes(b"rewritten by the producer")
    output = storage.output / "doc.signed.pdf"
    output.write_bytes(b"signed")
    twin = storage.output / "other.signed.pdf"
    twin.write_bytes(b"not ours")
    job = await _job(api, "doc.pdf", "Completed", output_path=str(output),
                     input_size=fingerprint.size, input_sha256=fingerprint.sha256)
    report = await api.context.faces.signer.jobs.delete(job.id, actor="op@bank",
                                                        reason="free the name")
    assert str(output) in report.removed and not output.exists()
    assert twin.exists() and source.exists()
    assert any("changed since staging" in kept for kept in report.kept)
    [event] = [e for e in await _events(api) if e.type == "JobDeleted"]
    assert event.message.startswith(f"Job {job.id} ('doc.pdf', Completed) deleted by op@bank.")
    assert event.message.endswith("Reason: free the name.")
    assert await JobRepository(api.context.sessions).get(job.id) is None


async def test_deleting_a_queued_job_cancels_it_first_and_a_running_one_is_refused(api):
    jobs = api.context.faces.signer.jobs
    queued = await _job(api, "q.pdf", "Queued")
    await jobs.delete(queued.id, actor="op")
    [event] = [e for e in await _events(api) if e.type == "JobDeleted"]
    assert "('q.pdf', Queued, canceled to delete it)" in event.message
    running = await _job(api, "r.pdf", "Processing")
    with pytest.raises(EsteiraError) as refused:
        await jobs.delete(running.id, actor="op")
    assert refused.value.code == "job.not-queued"
