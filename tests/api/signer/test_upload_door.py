"""The upload door's edges: a failed upload frees its name, the size limit holds while the body
streams in, and names and parts the pipeline can't carry are refused."""

from __future__ import annotations

import logging
import uuid

import grpc
import pytest
import starlette.formparsers

from activities.signer.crypto.samples import make_pdf
from tests.api.conftest import API_KEY
from tests.api.signer.test_grpc_signer import (  # noqa: F401 (the gRPC fixture)
    KEY,
    signer,
    stored_uploads,
    upload,
)

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


class _CountingSpool(starlette.formparsers.SpooledTemporaryFile):  # type: ignore[misc]
    """The form parser's temp file, counting what is written to it."""

    written = 0

    def write(self, data):
        type(self).written += len(data)
        return super().write(data)


@pytest.fixture
def spooled(monkeypatch) -> type[_CountingSpool]:
    """How many bytes the form parser wrote to its temp files during the test."""
    _CountingSpool.written = 0
    monkeypatch.setattr(starlette.formparsers, "SpooledTemporaryFile", _CountingSpool)
    return _CountingSpool


def _multipart_head(name: str) -> bytes:
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"{name}\"\r\nContent-Type: application/pdf\r\n\r\n").encode()


class _Body:
    """A multipart body of `size` file bytes sent in 64 KiB chunks, counting what was read."""

    CHUNK = 64 * 1024

    def __init__(self, name: str, size: int) -> None:
        self.parts = [_multipart_head(name), *[b"x" * self.CHUNK] * (size // self.CHUNK),
                      f"\r\n--{BOUNDARY}--\r\n".encode()]
        self.length = sum(len(p) for p in self.parts)
        self.sent = 0

    async def __aiter__(self):
        for part in self.parts:
            self.sent += len(part)
            yield part


LIMIT = 1024 * 1024
HUGE = 32 * LIMIT
CONTENT_TYPE = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}


async def test_a_declared_length_past_the_limit_is_refused_before_a_byte_is_read(api, spooled):
    api.context.settings.upload.max_bytes = LIMIT
    body = _Body("huge.pdf", HUGE)
    answer = await api.post("/api/files", content=body, headers={
        **AUTH, **CONTENT_TYPE, "Content-Length": str(body.length)})
    assert (answer.status_code, answer.json()["code"]) == (413, "upload.too-large")
    assert answer.headers["content-type"] == "application/problem+json"
    assert spooled.written == 0 and body.sent <= body.CHUNK
    assert _stored(api) == []


@pytest.mark.parametrize("declared", [None, "1000"], ids=["chunked", "lying"])
async def test_a_streamed_body_is_cut_at_the_limit(api, spooled, declared):
    api.context.settings.upload.max_bytes = LIMIT
    body = _Body("huge.pdf", HUGE)
    headers = {**AUTH, **CONTENT_TYPE} | ({"Content-Length": declared} if declared else {})
    answer = await api.post("/api/files", content=body, headers=headers)
    assert (answer.status_code, answer.json()["code"]) == (413, "upload.too-large")
    bound = LIMIT + 64 * 1024 + body.CHUNK  # the limit, the framing allowance, one chunk
    assert spooled.written <= bound, spooled.written
    assert body.sent <= bound + body.CHUNK
    assert _stored(api) == []


async def test_a_body_within_the_limit_still_uploads_without_a_length(api, spooled):
    api.context.settings.upload.max_bytes = LIMIT
    pdf = make_pdf()
    body = _Body("small.pdf", 0)
    body.parts[1:1] = [pdf]
    answer = await api.post("/api/files", content=body, headers={**AUTH, **CONTENT_TYPE})
    assert answer.status_code == 201, answer.text
    assert (_uploads(api) / "small.pdf").read_bytes() == pdf


async def test_a_grpc_message_past_the_transport_s_limit_leaves_nothing_in_incoming(
        signer):  # noqa: F811
    # One chunk past gRPC's 4 MiB message limit: the transport ends the call mid-upload.
    data = make_pdf() + b"\0" * (5 * 1024 * 1024)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await signer.stub.SubmitFile(upload("big.pdf", data, chunk=len(data)), metadata=KEY)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert stored_uploads(signer.settings) == []
    # The name is free: the same file in small chunks is queued.
    job = await signer.stub.SubmitFile(upload("big.pdf", make_pdf()), metadata=KEY)
    assert job.status == "Queued"


@pytest.mark.parametrize("raw", [".pdf", "..pdf", ".xml", "pasta/.pdf"])
async def test_a_name_that_is_only_an_extension_is_refused_not_renamed(api, raw):
    answer = await api.post("/api/files", headers=AUTH, files={"file": (raw, make_pdf())})
    assert (answer.status_code, answer.json()["code"]) == (422, "input.invalid-name")
    assert _stored(api) == []


async def test_a_hidden_file_s_name_keeps_its_extension(api):
    answer = await api.post("/api/files", headers=AUTH,
                            files={"file": (".lote.pdf", make_pdf())})
    assert answer.status_code == 201, answer.text
    assert (answer.json()["fileName"], answer.json()["format"]) == ("lote.pdf", "Pades")


@pytest.mark.parametrize("second", ["file", "other"])
async def test_two_files_in_one_upload_are_refused_and_neither_is_queued(api, second):
    files = [("file", ("a.pdf", make_pdf())), (second, ("b.pdf", make_pdf()))]
    answer = await api.post("/api/files", headers=AUTH, files=files)
    assert (answer.status_code, answer.json()["code"]) == (422, "request.invalid")
    assert "one file per request" in answer.json()["detail"]
    assert _stored(api) == []
    listed = (await api.get("/api/jobs", headers=AUTH)).json()["items"]
    assert listed == []
