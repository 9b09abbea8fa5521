"""The upload door's edges: a failed upload frees its name, the size limit holds while the body
streams in, and names and parts the pipeline can't carry are refused."""

from __future__ import annotations

import logging
import uuid

import pytest
import starlette.formparsers

from activities.signer.crypto.samples import make_pdf
from tests.api.conftest import API_KEY

AUTH = {"X-API-Key": API_KEY}
BOUNDARY = "esteira-test-boundary"


@pytest.fixture(autouse=True)
def _own_task_queues(settings):
    settings.pipeline.task_queue_suffix = f"-door-{uuid.uuid4().hex[:8]}"


def _uploads(api):
    return api.context.settings.storage_root / "uploads"


def _stored(api) -> list[str]:
    """Every file under uploads/ (the waiting copies and anything left in .incoming)."""
    root = _uploads(api)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) \
        if root.exists() else []


async def test_an_upload_whose_enqueue_throws_leaves_no_file_holding_its_name(
        api, monkeypatch, caplog):
    enqueuer = api.context.faces.signer.enqueuer
    enqueue = enqueuer.enqueue
    calls = 0

    async def throws_once(path, **kwargs):
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("database is locked")
        return await enqueue(path, **kwargs)

    monkeypatch.setattr(enqueuer, "enqueue", throws_once)
    # The app answers 500; the test transport re-raises what the app raised.
    with caplog.at_level(logging.ERROR, logger="esteira.signer.intake"), \
            pytest.raises(RuntimeError, match="database is locked"):
        await api.post("/api/files", headers=AUTH, files={"file": ("lote.pdf", make_pdf())})
    assert _stored(api) == [], "the failed attempt's file is left holding the name"
    assert any("lote.pdf" in r.getMessage() and r.exc_info for r in caplog.records)
    again = await api.post("/api/files", headers=AUTH, files={"file": ("lote.pdf", make_pdf())})
    assert again.status_code == 201, again.text
    assert _stored(api) == ["lote.pdf"]


async def test_an_upload_failing_after_its_job_was_recorded_keeps_the_job_s_file(api, monkeypatch):
    enqueuer = api.context.faces.signer.enqueuer

    async def unreachable(job_id, job=None):
        raise RuntimeError("temporal unreachable")

    monkeypatch.setattr(enqueuer, "start_workflow", unreachable)
    with pytest.raises(RuntimeError, match="temporal unreachable"):
        await api.post("/api/files", headers=AUTH, files={"file": ("kept.pdf", make_pdf())})
    # The Queued row is the truth (its workflow is started later): its input stays.
    job = await api.context.faces.signer.repository.latest_for_path(str(_uploads(api) / "kept.pdf"))
    assert job is not None and job.status == "Queued"
    assert _stored(api) == ["kept.pdf"]
