"""What a black-box probe found on the REST API: a busy store, paths, URLs, huge free text."""

from __future__ import annotations

import contextlib
import sqlite3
import uuid

import httpx
import pytest

from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository
from services.app import create_app
from shared.db import engine as db_engine
from shared.free_text import MAX_REASON_CHARS
from tests.api.conftest import API_KEY, make_context

AUTH = {"X-API-Key": API_KEY}
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


@pytest.fixture(autouse=True)
def _own_task_queues(settings):
    settings.pipeline.task_queue_suffix = f"-probe-{uuid.uuid4().hex[:8]}"


async def test_a_five_megabyte_pause_reason_is_refused_and_nothing_changes(api):
    huge = await api.post("/api/pipeline/pause", json={"reason": "x" * 5_000_000}, headers=AUTH)
    assert huge.status_code == 422 and huge.json()["code"] == "request.invalid"
    assert str(MAX_REASON_CHARS) in huge.json()["message"]
    assert (await api.context.faces.signer.pipeline.state()).paused is False
    fits = await api.post("/api/pipeline/pause", json={"reason": "y" * MAX_REASON_CHARS},
                          headers=AUTH)
    assert fits.status_code == 200


async def test_a_huge_cancel_reason_is_refused(api):
    job = Job(id=str(uuid.uuid4()), file_name="f.pdf", original_path="/in/f.pdf",
              source="watcher", profile_name="default", format="Pades", status="Queued",
              folder="inbox")
    await JobRepository(api.context.sessions).insert(job, "test row")
    answer = await api.post(f"/api/jobs/{job.id}/cancel",
                            json={"reason": "z" * (MAX_REASON_CHARS + 1)}, headers=AUTH)
    assert answer.status_code == 422 and answer.json()["code"] == "request.invalid"
    assert (await api.get(f"/api/jobs/{job.id}", headers=AUTH)).json()["status"] == "Queued"


async def test_refusals_name_files_not_the_hosts_paths(api):
    storage = api.context.settings.storage_root
    inbox = storage / "input" / "inbox"
    job = Job(id=str(uuid.uuid4()), file_name="gone.pdf",
              original_path=str(inbox / "gone.pdf"), source="watcher", profile_name="default",
              format="Pades", status="Failed", folder="inbox")
    await JobRepository(api.context.sessions).insert(job, "test row")
    retried = await api.post(f"/api/jobs/{job.id}/retry", headers=AUTH)
    assert retried.json()["code"] == "job.input-missing"
    assert "gone.pdf" in retried.json()["message"]
    assert str(storage) not in retried.text and str(inbox) not in retried.text
    inbox.rmdir()
    rescan = await api.post("/api/rescan", headers=AUTH)
    [row] = rescan.json()["folders"]
    assert row["errors"] == 1 and "inbox" in row["messages"][0]
    assert str(storage) not in rescan.text


@SQLITE_ONLY
async def test_a_locked_store_answers_503_with_retry_after(settings, temporal_env, monkeypatch):
    # A short busy wait, so the test doesn't sit out the 10 s production one.
    monkeypatch.setattr(db_engine, "SQLITE_PRAGMAS", tuple(
        "PRAGMA busy_timeout=100" if p.startswith("PRAGMA busy_timeout") else p
        for p in db_engine.SQLITE_PRAGMAS))
    context = await make_context(settings, temporal_env)
    database = settings.sqlalchemy_url.split("///", 1)[1]
    holder = sqlite3.connect(database, isolation_level=None)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(context)),
                                     base_url="http://esteira") as api:
            holder.execute("BEGIN EXCLUSIVE")  # another writer, holding the store
            busy = await api.post("/api/pipeline/pause", json={"reason": "x"}, headers=AUTH)
            holder.execute("ROLLBACK")
            assert busy.status_code == 503, busy.text
            assert busy.json()["code"] == "store.unavailable"
            assert int(busy.headers["Retry-After"]) >= 1
            # Served as soon as the other writer lets go.
            again = await api.post("/api/pipeline/pause", json={"reason": "x"}, headers=AUTH)
            assert again.status_code == 200
    finally:
        with contextlib.suppress(sqlite3.Error):
            holder.close()
        await context.engine.dispose()
