"""A job's files: listed and streamed with the key or an operator's session, nothing else."""

from __future__ import annotations

import os
import uuid

import pytest
from sqlmodel import select

from activities.signer.models.jobs import Job, JobHistory
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from shared.db.models import OperationalEvent
from shared.errors import EsteiraError
from tests.api.conftest import API_KEY
from tests.dashboard.conftest import sign_in

AUTH = {"X-API-Key": API_KEY}


def _storage(api) -> StorageTree:
    storage = StorageTree(api.context.settings.storage_root)
    storage.ensure()
    return storage


async def _job(api, name: str, status: str, **fields) -> Job:
    inbox = api.context.settings.storage_root / "input" / "inbox"
    job = Job(id=str(uuid.uuid4()), file_name=name, original_path=str(inbox / name),
              source="watcher", profile_name="default", format="Pades", status=status,
              folder="inbox", **fields)
    return await JobRepository(api.context.sessions).insert(job, "test row")


async def _completed(api, storage: StorageTree, name: str = "folha.pdf",
                     output: str = "folha.signed.pdf", data: bytes = b"%PDF signed") -> Job:
    path = storage.output / output
    path.write_bytes(data)
    return await _job(api, name, "Completed", output_path=str(path))


async def _downloads(api, job_id: str) -> list[OperationalEvent]:
    async with api.context.sessions() as session:
        return list((await session.exec(select(OperationalEvent).where(
            OperationalEvent.type == "JobFileDownloaded"))).all())


async def test_a_completed_job_lists_and_streams_its_signed_output(api):
    storage = _storage(api)
    job = await _completed(api, storage)
    listing = await api.get(f"/api/jobs/{job.id}/files", headers=AUTH)
    assert listing.status_code == 200
    [item] = listing.json()["items"]
    assert (item["name"], item["kind"], item["size"], item["encrypted"]) == (
        "output/folha.signed.pdf", "signed", 11, False)
    assert item["url"] == f"/api/jobs/{job.id}/files/output/folha.signed.pdf"
    answer = await api.get(item["url"], headers=AUTH)
    assert answer.status_code == 200
    assert answer.content == b"%PDF signed"
    assert answer.headers["content-type"] == "application/octet-stream"
    assert answer.headers["content-disposition"].startswith(
        'attachment; filename="folha.signed.pdf"')
    [event] = await _downloads(api, job.id)
    assert event.actor == "api-key" and event.properties == {
        "jobId": job.id, "file": "output/folha.signed.pdf", "size": 11}
    async with api.context.sessions() as session:
        history = (await session.exec(select(JobHistory).where(
            JobHistory.job_id == job.id).order_by(JobHistory.id))).all()
    assert history[-1].message == "output/folha.signed.pdf downloaded by api-key."


async def test_a_reject_return_an_error_copy_and_an_encrypted_output_are_listed(api):
    storage = _storage(api)
    returned = storage.output / "folha.reject.rem.enc"
    returned.write_bytes(b"BSENC...")
    rejected = await _job(api, "folha.rem", "Canceled", output_path=str(returned))
    (storage.error / rejected.id / "sub").mkdir(parents=True)
    (storage.error / rejected.id / "folha.rem").write_bytes(b"staged")
    (storage.error / rejected.id / "sub" / "trace.txt").write_bytes(b"why")
    items = (await api.get(f"/api/jobs/{rejected.id}/files", headers=AUTH)).json()["items"]
    assert [(i["name"], i["kind"], i["encrypted"]) for i in items] == [
        ("output/folha.reject.rem.enc", "reject", True),
        ("error/folha.rem", "error", False),
        ("error/sub/trace.txt", "error", False)]
    answer = await api.get(f"/api/jobs/{rejected.id}/files/output/folha.reject.rem.enc",
                           headers=AUTH)
    assert answer.content == b"BSENC..."  # the stored bytes: decrypting is `esteira decrypt`
    nested = await api.get(f"/api/jobs/{rejected.id}/files/error/sub/trace.txt", headers=AUTH)
    assert nested.content == b"why"


async def test_an_operator_session_downloads_and_the_trail_names_the_operator(api):
    storage = _storage(api)
    job = await _completed(api, storage)
    assert (await api.get(f"/api/jobs/{job.id}/files")).status_code == 401
    assert (await sign_in(api)).status_code == 303
    assert (await api.get(f"/api/jobs/{job.id}/files")).status_code == 200
    answer = await api.get(f"/api/jobs/{job.id}/files/output/folha.signed.pdf")
    assert answer.status_code == 200 and answer.content == b"%PDF signed"
    [event] = await _downloads(api, job.id)
    assert event.actor == "operator:operator"
    # The session reads; it changes nothing the key alone may change.
    assert (await api.post("/api/pipeline/pause")).status_code == 401


async def test_unknown_jobs_and_files_are_404_with_the_signers_codes(api):
    storage = _storage(api)
    job = await _completed(api, storage)
    missing = await api.get(f"/api/jobs/{uuid.uuid4()}/files", headers=AUTH)
    assert missing.status_code == 404 and missing.json()["code"] == "job.not-found"
    fetch = await api.get(f"/api/jobs/{uuid.uuid4()}/files/output/folha.signed.pdf",
                          headers=AUTH)
    assert fetch.json()["code"] == "job.not-found"
    for name in ("output/other.pdf", "folha.signed.pdf", "error/folha.pdf"):
        answer = await api.get(f"/api/jobs/{job.id}/files/{name}", headers=AUTH)
        assert answer.status_code == 404 and answer.json()["code"] == "job.file-not-found"
    assert await _downloads(api, job.id) == []


async def test_another_jobs_file_and_a_file_not_recorded_are_refused(api):
    storage = _storage(api)
    mine = await _completed(api, storage)
    theirs = await _completed(api, storage, "outro.pdf", "outro.signed.pdf", b"theirs")
    (storage.output / "loose.pdf").write_bytes(b"nobody's")
    for name in ("output/outro.signed.pdf", "output/loose.pdf"):
        answer = await api.get(f"/api/jobs/{mine.id}/files/{name}", headers=AUTH)
        assert answer.json()["code"] == "job.file-not-found", name
    assert (await api.get(f"/api/jobs/{theirs.id}/files/output/outro.signed.pdf",
                          headers=AUTH)).content == b"theirs"


@pytest.mark.parametrize("tail", [
    "..%2F..%2Finput%2Finbox%2Fsecret.pdf",
    "output%2F..%2F..%2Finput%2Finbox%2Fsecret.pdf",
    "%2E%2E/%2E%2E/input/inbox/secret.pdf",
    "error/..%2F..%2Finput%2Finbox%2Fsecret.pdf",
    "%2Fetc%2Fpasswd",
    "output/%2Fetc%2Fpasswd",
    "output%5C..%5C..%5Cinput%5Cinbox%5Csecret.pdf",
])
async def test_path_traversal_in_the_file_part_is_refused(api, tail):
    storage = _storage(api)
    job = await _completed(api, storage)
    (storage.root / "input" / "inbox").mkdir(parents=True, exist_ok=True)
    (storage.root / "input" / "inbox" / "secret.pdf").write_bytes(b"TOP-SECRET-BYTES")
    answer = await api.get(f"/api/jobs/{job.id}/files/{tail}", headers=AUTH)
    assert answer.status_code == 404
    assert answer.json()["code"] in ("job.file-not-found", "resource.not-found")
    assert b"TOP-SECRET-BYTES" not in answer.content


async def test_the_face_refuses_dot_dot_and_absolute_names(api):
    storage = _storage(api)
    job = await _completed(api, storage)
    downloads = api.context.faces.signer.downloads
    for name in ("../input/inbox/secret.pdf", "output/../output/folha.signed.pdf",
                 "/etc/passwd", str(storage.output / "folha.signed.pdf"),
                 "output//folha.signed.pdf"):
        with pytest.raises(EsteiraError) as refused:
            await downloads.open(job.id, name, actor="test")
        assert refused.value.code == "job.file-not-found", name


async def test_symlinks_pointing_out_of_the_tree_are_never_listed_nor_served(api, tmp_path):
    storage = _storage(api)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"secret")
    failed = await _job(api, "bad.pdf", "Failed")
    error_dir = storage.error / failed.id
    error_dir.mkdir()
    (error_dir / "bad.pdf").write_bytes(b"staged")
    os.symlink(outside / "secret.txt", error_dir / "link.txt")
    os.symlink(outside, error_dir / "linked-folder")
    # An output recorded as a link to a file outside, and one recorded outside output/.
    os.symlink(outside / "secret.txt", storage.output / "bad.signed.pdf")
    linked = await _job(api, "x.pdf", "Completed",
                        output_path=str(storage.output / "bad.signed.pdf"))
    elsewhere = await _job(api, "y.pdf", "Completed", output_path=str(outside / "secret.txt"))
    items = (await api.get(f"/api/jobs/{failed.id}/files", headers=AUTH)).json()["items"]
    assert [i["name"] for i in items] == ["error/bad.pdf"]
    for job_id, name in ((failed.id, "error/link.txt"),
                         (failed.id, "error/linked-folder/secret.txt"),
                         (linked.id, "output/bad.signed.pdf"),
                         (elsewhere.id, "output/secret.txt")):
        answer = await api.get(f"/api/jobs/{job_id}/files/{name}", headers=AUTH)
        assert answer.status_code == 404 and answer.json()["code"] == "job.file-not-found", name
    for job in (linked, elsewhere):
        assert (await api.get(f"/api/jobs/{job.id}/files", headers=AUTH)).json()["items"] == []


async def test_an_error_folder_that_is_itself_a_symlink_lists_nothing(api, tmp_path):
    storage = _storage(api)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"secret")
    failed = await _job(api, "bad.pdf", "Failed")
    os.symlink(outside, storage.error / failed.id)
    assert (await api.get(f"/api/jobs/{failed.id}/files", headers=AUTH)).json()["items"] == []
    answer = await api.get(f"/api/jobs/{failed.id}/files/error/secret.txt", headers=AUTH)
    assert answer.json()["code"] == "job.file-not-found"


async def test_a_file_swapped_for_a_symlink_after_the_listing_is_not_followed(
        api, tmp_path, monkeypatch):
    storage = _storage(api)
    job = await _completed(api, storage)
    downloads = api.context.faces.signer.downloads
    [listed] = await downloads.files(job.id)
    # The swap lands between the listing and the open.
    monkeypatch.setattr(downloads, "_list", lambda _job: [listed])
    (tmp_path / "secret.txt").write_bytes(b"secret")
    listed.path.unlink()
    os.symlink(tmp_path / "secret.txt", listed.path)
    with pytest.raises(EsteiraError) as refused:
        await downloads.open(job.id, "output/folha.signed.pdf", actor="test")
    assert refused.value.code == "job.file-not-found"
