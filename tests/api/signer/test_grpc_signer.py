"""`esteira.signer.v1.SignerService` over a real gRPC channel: every RPC, its error codes in
google.rpc.Status details, the API key, health and reflection, on both stores."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status
from sqlalchemy import text
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.crypto.samples import make_pdf
from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository
from services.bootstrap import bootstrap
from services.composition import compose
from services.grpc_server.gen.esteira.signer.v1 import signer_pb2 as pb
from services.grpc_server.gen.esteira.signer.v1 import signer_pb2_grpc
from services.grpc_server.main import build_server
from shared.db.engine import create_engine, session_factory
from shared.db.models import OperationalEvent
from shared.free_text import MAX_REASON_CHARS
from shared.settings import Settings
from shared.temporal import TemporalHandle

API_KEY = "test-api-key-0123456789"
KEY = [("x-api-key", API_KEY)]
SIGNER = "esteira.signer.v1.SignerService"


@dataclass
class Signer:
    """A started server on loopback, its stub and the store behind it."""

    stub: signer_pb2_grpc.SignerServiceStub
    channel: grpc.aio.Channel
    sessions: async_sessionmaker[AsyncSession]
    settings: Settings

    @property
    def inbox(self) -> Path:
        return self.settings.storage_root / "input" / "inbox"

    async def job(self, **fields) -> Job:
        name = fields.pop("file_name", f"{uuid.uuid4().hex[:8]}.pdf")
        job = Job(id=str(uuid.uuid4()), file_name=name,
                  original_path=fields.pop("original_path", str(self.inbox / name)),
                  source="watcher", profile_name="default", format="Pades",
                  status=fields.pop("status", "Queued"), folder="inbox", **fields)
        return await JobRepository(self.sessions).insert(job, "test row")

    async def events(self, kind: str) -> list[OperationalEvent]:
        async with self.sessions() as session:
            return list((await session.exec(select(OperationalEvent).where(
                OperationalEvent.type == kind))).all())


@pytest_asyncio.fixture
async def signer(settings: Settings, temporal_env) -> AsyncIterator[Signer]:
    settings.pipeline.task_queue_suffix = f"-grpc-{uuid.uuid4().hex[:8]}"
    await bootstrap(settings)
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)

    async def temporal():
        return temporal_env.client

    built = build_server(settings, compose(settings, sessions, TemporalHandle(temporal)), API_KEY)
    port = built.server.add_insecure_port("127.0.0.1:0")
    await built.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield Signer(signer_pb2_grpc.SignerServiceStub(channel), channel, sessions, settings)
    finally:
        await built.server.stop(0)
        await engine.dispose()


def refusal(error: grpc.aio.AioRpcError) -> tuple[grpc.StatusCode, str]:
    """The status code and the stable code carried in google.rpc.Status details."""
    status = rpc_status.from_call(error)
    assert status is not None, "no google.rpc.Status in the trailers"
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.domain == "esteira"
    return error.code(), info.reason


async def refused(call) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return refusal(caught.value)


def upload(name: str, data: bytes, profile: str = "", chunk: int = 4096):
    yield pb.SubmitFileRequest(metadata=pb.SubmitFileMetadata(file_name=name, profile=profile))
    for start in range(0, len(data), chunk):
        yield pb.SubmitFileRequest(chunk=data[start:start + chunk])


def stored_uploads(settings: Settings) -> list[Path]:
    uploads = settings.storage_root / "uploads"
    return sorted(p for p in uploads.rglob("*") if p.is_file()) if uploads.exists() else []


async def test_api_key_health_and_reflection(signer):
    stub = signer.stub
    for metadata, code in ((None, "auth.missing-key"),
                           ([("x-api-key", "wrong")], "auth.invalid-key")):
        expected = (grpc.StatusCode.UNAUTHENTICATED, code)
        with pytest.raises(grpc.aio.AioRpcError) as unary:
            await stub.GetPipelineState(pb.GetPipelineStateRequest(), metadata=metadata)
        assert refusal(unary.value) == expected
        with pytest.raises(grpc.aio.AioRpcError) as streamed_in:
            await stub.SubmitFile(upload("a.pdf", make_pdf()), metadata=metadata)
        assert refusal(streamed_in.value) == expected
        with pytest.raises(grpc.aio.AioRpcError) as streamed_out:
            async for _ in stub.WatchJobs(pb.WatchJobsRequest(), metadata=metadata):
                pass
        assert refusal(streamed_out.value) == expected
    assert stored_uploads(signer.settings) == []

    health = health_pb2_grpc.HealthStub(signer.channel)
    for service in ("", SIGNER):
        answer = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert answer.status == health_pb2.HealthCheckResponse.SERVING

    reflect = reflection_pb2_grpc.ServerReflectionStub(signer.channel)
    requests = [reflection_pb2.ServerReflectionRequest(list_services=""),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol=SIGNER)]
    answers = [a async for a in reflect.ServerReflectionInfo(iter(requests), metadata=KEY)]
    names = {s.name for s in answers[0].list_services_response.service}
    assert {SIGNER, "esteira.v1.SystemService", "grpc.health.v1.Health"} <= names
    assert answers[1].file_descriptor_response.file_descriptor_proto


async def test_an_unauthenticated_empty_client_stream_is_refused_at_once(signer):
    # The deadline is far below the test's timeout: a refusal that waited for a first message
    # would end DEADLINE_EXCEEDED instead.
    reflect = reflection_pb2_grpc.ServerReflectionStub(signer.channel)
    for metadata, code in ((None, "auth.missing-key"),
                           ([("x-api-key", "wrong")], "auth.invalid-key")):
        expected = (grpc.StatusCode.UNAUTHENTICATED, code)
        assert await refused(signer.stub.SubmitFile(iter(()), metadata=metadata,
                                                    timeout=5)) == expected
        with pytest.raises(grpc.aio.AioRpcError) as both_ways:
            async for _ in reflect.ServerReflectionInfo(iter(()), metadata=metadata, timeout=5):
                pass
        assert refusal(both_ways.value) == expected


async def test_pause_resume_and_state(signer):
    stub = signer.stub
    paused = await stub.PausePipeline(pb.PausePipelineRequest(reason="Manutenção"), metadata=KEY)
    again = await stub.PausePipeline(pb.PausePipelineRequest(reason="x"), metadata=KEY)
    assert paused.paused and again.reason == "Manutenção" and again.changed_by == "grpc"
    state = await stub.GetPipelineState(pb.GetPipelineStateRequest(), metadata=KEY)
    assert state.paused and state.HasField("changed_at")
    resumed = await stub.ResumePipeline(pb.ResumePipelineRequest(), metadata=KEY)
    assert not resumed.paused
    assert [e.message for e in await signer.events("PipelinePaused")] == [
        "Pipeline paused by operator. Reason: Manutenção."]
    assert len(await signer.events("PipelineResumed")) == 1


async def test_a_pause_reason_past_the_bound_is_refused_over_grpc_too(signer):
    long_reason = "x" * (MAX_REASON_CHARS + 1)
    assert await refused(signer.stub.PausePipeline(pb.PausePipelineRequest(reason=long_reason),
                                                   metadata=KEY)) == (
        grpc.StatusCode.INVALID_ARGUMENT, "request.invalid")
    state = await signer.stub.GetPipelineState(pb.GetPipelineStateRequest(), metadata=KEY)
    assert not state.paused


async def test_a_pause_losing_the_race_gets_race_lost_and_records_nothing(signer, backend):
    if backend != "postgres":
        pytest.skip("holding the pause row mid-call needs PostgreSQL's row locks")
    stub = signer.stub
    await stub.PausePipeline(pb.PausePipelineRequest(), metadata=KEY)
    await stub.ResumePipeline(pb.ResumePipelineRequest(), metadata=KEY)
    engine = create_engine(signer.settings.sqlalchemy_url)
    try:
        async with engine.connect() as rival:
            # A concurrent resume->pause holds the row; the call reads the old version, then
            # waits on the row; the rival commits first, so the call's conditional write loses.
            await rival.execute(text("UPDATE pipeline_state SET paused = true, "
                                     "version = version + 1 WHERE id = 1"))
            call = asyncio.ensure_future(
                stub.PausePipeline(pb.PausePipelineRequest(reason="late"), metadata=KEY))
            await _until_waiting_on_a_lock(engine)
            await rival.commit()
            # A lost compare-and-set: read again, then retry (the same status as pickup's).
            assert await refused(call) == (grpc.StatusCode.ABORTED, "pipeline.race-lost")
    finally:
        await engine.dispose()
    assert len(await signer.events("PipelinePaused")) == 1, "the loser recorded nothing"
    state = await stub.GetPipelineState(pb.GetPipelineStateRequest(), metadata=KEY)
    assert state.paused and state.reason == ""


async def _until_waiting_on_a_lock(engine) -> None:
    async with engine.connect() as probe:
        for _ in range(500):
            waiting = (await probe.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query ILIKE 'UPDATE pipeline_state%'"))).scalar()
            if waiting:
                return
            await probe.rollback()
            await asyncio.sleep(0.01)
    raise AssertionError("the call never reached the pause row")


async def test_get_and_list_jobs(signer):
    stub = signer.stub
    for n in range(5):
        await signer.job(status="Failed" if n % 2 else "Completed", file_name=f"lote-{n}.pdf")
    first = await stub.ListJobs(pb.ListJobsRequest(status=["Failed"], limit=1), metadata=KEY)
    assert [j.file_name for j in first.items] == ["lote-3.pdf"] and first.next_cursor
    rest = await stub.ListJobs(pb.ListJobsRequest(status=["Failed"], limit=1,
                                                  cursor=first.next_cursor), metadata=KEY)
    assert [j.file_name for j in rest.items] == ["lote-1.pdf"] and rest.next_cursor == ""
    text_match = await stub.ListJobs(pb.ListJobsRequest(text="LOTE-4"), metadata=KEY)
    assert [j.file_name for j in text_match.items] == ["lote-4.pdf"]
    assert await refused(stub.ListJobs(pb.ListJobsRequest(cursor="not a cursor"),
                                       metadata=KEY)) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                          "request.invalid")
    assert await refused(stub.ListJobs(pb.ListJobsRequest(limit=501), metadata=KEY)) == (
        grpc.StatusCode.INVALID_ARGUMENT, "request.invalid")
    detail = await stub.GetJob(pb.GetJobRequest(job_id=rest.items[0].id), metadata=KEY)
    assert detail.job.status == "Failed" and detail.history[0].message == "test row"
    assert detail.original_path.endswith("lote-1.pdf")
    assert await refused(stub.GetJob(pb.GetJobRequest(job_id=str(uuid.uuid4())),
                                     metadata=KEY)) == (grpc.StatusCode.NOT_FOUND,
                                                        "job.not-found")


async def test_cancel_and_retry_rules(signer):
    stub = signer.stub
    queued = await signer.job()
    canceled = await stub.CancelJob(pb.CancelJobRequest(job_id=queued.id, reason="wrong batch"),
                                    metadata=KEY)
    assert canceled.status == "Canceled"
    detail = await stub.GetJob(pb.GetJobRequest(job_id=queued.id), metadata=KEY)
    assert detail.history[-1].message == "Operator canceled: wrong batch."
    running = await signer.job(status="Processing")
    assert await refused(stub.CancelJob(pb.CancelJobRequest(job_id=running.id), metadata=KEY)
                         ) == (grpc.StatusCode.FAILED_PRECONDITION, "job.not-queued")
    assert await refused(stub.CancelJob(pb.CancelJobRequest(job_id="nope"), metadata=KEY)
                         ) == (grpc.StatusCode.NOT_FOUND, "job.not-found")

    (signer.inbox / "f.pdf").write_bytes(make_pdf())
    failed = await signer.job(status="Failed", file_name="f.pdf", error_code="document.corrupt")
    child = await stub.RetryJob(pb.RetryJobRequest(job_id=failed.id), metadata=KEY)
    assert (child.status, child.parent_job_id, child.profile) == ("Queued", failed.id, "default")
    assert child.id != failed.id
    done = await signer.job(status="Completed")
    gone = await signer.job(status="Failed", file_name="gone.pdf")
    for job, code in ((done, "job.not-failed"), (gone, "job.input-missing")):
        assert await refused(stub.RetryJob(pb.RetryJobRequest(job_id=job.id), metadata=KEY)
                             ) == (grpc.StatusCode.FAILED_PRECONDITION, code)
    assert await refused(stub.RetryJob(pb.RetryJobRequest(job_id="nope"), metadata=KEY)
                         ) == (grpc.StatusCode.NOT_FOUND, "job.not-found")


async def test_delete_job(signer):
    stub = signer.stub
    error_dir = signer.settings.storage_root / "error"
    failed = await signer.job(status="Failed")
    (error_dir / failed.id).mkdir(parents=True)
    report = await stub.DeleteJob(pb.DeleteJobRequest(job_id=failed.id, reason="duplicate"),
                                  metadata=KEY)
    assert list(report.removed) == [str(error_dir / failed.id)]
    [event] = await signer.events("JobDeleted")
    assert event.actor == "grpc" and event.message.endswith("Reason: duplicate.")
    assert await refused(stub.GetJob(pb.GetJobRequest(job_id=failed.id), metadata=KEY)
                         ) == (grpc.StatusCode.NOT_FOUND, "job.not-found")
    running = await signer.job(status="Verifying")
    assert await refused(stub.DeleteJob(pb.DeleteJobRequest(job_id=running.id), metadata=KEY)
                         ) == (grpc.StatusCode.FAILED_PRECONDITION, "job.not-queued")
    assert await refused(stub.DeleteJob(pb.DeleteJobRequest(job_id="nope"), metadata=KEY)
                         ) == (grpc.StatusCode.NOT_FOUND, "job.not-found")


async def test_submit_file_streams_an_upload_and_refusals_store_nothing(signer):
    stub = signer.stub
    settings = signer.settings
    data = make_pdf()
    job = await stub.SubmitFile(upload("contrato.pdf", data, chunk=1000), metadata=KEY)
    assert (job.file_name, job.status, job.source, job.profile) == (
        "contrato.pdf", "Queued", "upload", "default")
    stored = settings.storage_root / "uploads" / "contrato.pdf"
    assert stored_uploads(settings) == [stored] and stored.read_bytes() == data

    stored.unlink()
    for name in ("../..", "..\\..\\", "/", ""):
        assert await refused(stub.SubmitFile(upload(name, data), metadata=KEY)) == (
            grpc.StatusCode.INVALID_ARGUMENT, "input.invalid-name"), name
    # Only the last component of a path is kept, as POST /api/files does: it can't escape.
    escaped = await stub.SubmitFile(upload("../../../etc/evil.pdf", data), metadata=KEY)
    assert escaped.file_name == "evil.pdf"
    assert stored_uploads(settings) == [settings.storage_root / "uploads" / "evil.pdf"]
    (settings.storage_root / "uploads" / "evil.pdf").unlink()

    settings.upload.max_bytes = 10
    assert await refused(stub.SubmitFile(upload("big.pdf", data), metadata=KEY)) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED, "upload.too-large")
    settings.upload.max_bytes = 10_000_000
    assert await refused(stub.SubmitFile(upload("contrato.pdf", data), metadata=KEY)) == (
        grpc.StatusCode.FAILED_PRECONDITION, "file.already-processed")
    assert await refused(stub.SubmitFile(upload("a.pdf", data, profile="nope"), metadata=KEY)
                         ) == (grpc.StatusCode.NOT_FOUND, "profile.not-found")
    assert await refused(stub.SubmitFile(iter([pb.SubmitFileRequest(chunk=data)]),
                                         metadata=KEY)) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                            "request.invalid")
    settings.upload.enabled = False
    assert await refused(stub.SubmitFile(upload("x.pdf", data), metadata=KEY)) == (
        grpc.StatusCode.FAILED_PRECONDITION, "upload.disabled")
    assert stored_uploads(settings) == []


async def test_watch_jobs_streams_transitions_and_resumes_from_a_cursor(signer):
    stub = signer.stub
    queued = await signer.job()
    watch = stub.WatchJobs(pb.WatchJobsRequest(), metadata=KEY)
    try:
        # The stream starts "from now" (its headers say where): the creation is not replayed.
        headers = dict(await watch.initial_metadata())
        assert int(headers["x-watch-cursor"]) >= 1
        await stub.CancelJob(pb.CancelJobRequest(job_id=queued.id), metadata=KEY)
        seen = await asyncio.wait_for(watch.read(), timeout=30)
    finally:
        watch.cancel()
    assert (seen.job_id, seen.from_status, seen.to_status, seen.message) == (
        queued.id, "Queued", "Canceled", "Operator canceled.")

    other = await signer.job()
    replay = stub.WatchJobs(pb.WatchJobsRequest(cursor=str(seen.history_id - 1),
                                                job_id=queued.id), metadata=KEY)
    try:
        again = await asyncio.wait_for(replay.read(), timeout=30)
    finally:
        replay.cancel()
    assert again.history_id == seen.history_id and other.id != again.job_id
    bad = stub.WatchJobs(pb.WatchJobsRequest(cursor="x"), metadata=KEY)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await bad.read()
    assert refusal(caught.value) == (grpc.StatusCode.INVALID_ARGUMENT, "request.invalid")
