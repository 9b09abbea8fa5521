"""`esteira.signer.v1.SignerService`: the REST routes' operator functions, over gRPC."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from activities.signer.operator import (
    commands,
    delete_job,
    jobs,
    pipeline_control,
    upload,
    wiring,
)
from activities.signer.operator.transitions import TransitionTail
from services.grpc_server import signer_messages as messages
from services.grpc_server.gen.esteira.signer.v1 import signer_pb2, signer_pb2_grpc
from services.grpc_server.refusal import refusals, refuse
from shared.errors import ErrorCode, EsteiraError
from shared.settings import Settings

ACTOR = "grpc"
# How often WatchJobs looks for new transitions in the job history.
WATCH_POLL_SECONDS = 0.5
WATCH_CURSOR_HEADER = "x-watch-cursor"
Request = signer_pb2.SubmitFileRequest
# How long a refused upload's remaining stream is read before the refusal is sent.
REFUSAL_DRAIN_SECONDS = 5.0


class SignerServicer(signer_pb2_grpc.SignerServiceServicer):
    """Thin: decode, call the operator functions, map error codes to google.rpc.Status."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession],
                 temporal: Callable[[], Awaitable[Client]], *,
                 watch_poll_seconds: float = WATCH_POLL_SECONDS) -> None:
        self._settings = settings
        self._sessions = sessions
        self._temporal = temporal
        self._watch_poll = watch_poll_seconds

    def _repository(self) -> wiring.JobRepository:
        return wiring.repository(self._sessions)

    async def _enqueuer(self) -> wiring.Enqueuer:
        return wiring.enqueuer(self._sessions, self._settings, await self._temporal())

    @refusals
    async def SubmitFile(self, request_iterator: AsyncIterator[Request],
                         context: grpc.aio.ServicerContext) -> signer_pb2.Job:
        try:
            first = await anext(request_iterator, None)
            if first is None or first.WhichOneof("payload") != "metadata":
                raise EsteiraError(ErrorCode.REQUEST_INVALID,
                                   "The first message must carry the file's metadata.")
            repository = self._repository()
            job_id = await upload.receive_upload(
                repository, self._settings, raw_name=first.metadata.file_name,
                profile=first.metadata.profile or None, chunks=_chunks(request_iterator),
                enqueuer=self._enqueuer)
        except EsteiraError:
            await _drain(request_iterator)
            raise
        return messages.job(await repository.get(job_id))

    @refusals
    async def GetJob(self, request: signer_pb2.GetJobRequest,
                     context: grpc.aio.ServicerContext) -> signer_pb2.JobDetail:
        return messages.job_detail(await jobs.job_detail(self._sessions, request.job_id))

    @refusals
    async def ListJobs(self, request: signer_pb2.ListJobsRequest,
                       context: grpc.aio.ServicerContext) -> signer_pb2.ListJobsResponse:
        if not 0 <= request.limit <= jobs.MAX_PAGE:
            raise EsteiraError(ErrorCode.REQUEST_INVALID,
                               f"limit must be between 1 and {jobs.MAX_PAGE} (0: 50).")
        filters = jobs.JobFilter(
            statuses=list(request.status), profile=request.profile or None,
            folder=request.folder or None, text=request.text or None,
            created_from=messages.moment(request.created_from, request.HasField("created_from")),
            created_to=messages.moment(request.created_to, request.HasField("created_to")))
        rows, next_cursor = await jobs.list_jobs(self._sessions, filters,
                                                 limit=request.limit or 50,
                                                 cursor=request.cursor or None)
        return signer_pb2.ListJobsResponse(items=[messages.job(row) for row in rows],
                                           next_cursor=next_cursor or "")

    @refusals
    async def CancelJob(self, request: signer_pb2.CancelJobRequest,
                        context: grpc.aio.ServicerContext) -> signer_pb2.Job:
        job = await commands.cancel_job(self._repository(), await self._temporal(),
                                        request.job_id, reason=request.reason or None,
                                        actor=ACTOR)
        return messages.job(job)

    @refusals
    async def RetryJob(self, request: signer_pb2.RetryJobRequest,
                       context: grpc.aio.ServicerContext) -> signer_pb2.Job:
        new_id = await commands.retry_job(self._repository(), await self._enqueuer(),
                                          request.job_id)
        return messages.job(await self._repository().get(new_id))

    @refusals
    async def DeleteJob(self, request: signer_pb2.DeleteJobRequest,
                        context: grpc.aio.ServicerContext) -> signer_pb2.DeleteJobResponse:
        report = await delete_job.delete_job(
            self._repository(), wiring.storage(self._settings), await self._temporal(),
            request.job_id, actor=ACTOR, reason=request.reason or None)
        return signer_pb2.DeleteJobResponse(removed=report.removed, kept=report.kept)

    @refusals
    async def PausePipeline(self, request: signer_pb2.PausePipelineRequest,
                            context: grpc.aio.ServicerContext) -> signer_pb2.PipelineState:
        view = await pipeline_control.set_paused(self._sessions, paused=True, actor=ACTOR,
                                                 reason=request.reason or None)
        return messages.pipeline(view)

    @refusals
    async def ResumePipeline(self, request: signer_pb2.ResumePipelineRequest,
                             context: grpc.aio.ServicerContext) -> signer_pb2.PipelineState:
        view = await pipeline_control.set_paused(self._sessions, paused=False, actor=ACTOR)
        return messages.pipeline(view)

    @refusals
    async def GetPipelineState(self, request: signer_pb2.GetPipelineStateRequest,
                               context: grpc.aio.ServicerContext) -> signer_pb2.PipelineState:
        return messages.pipeline(await pipeline_control.pipeline_state(self._sessions))

    async def WatchJobs(self, request: signer_pb2.WatchJobsRequest,
                        context: grpc.aio.ServicerContext
                        ) -> AsyncIterator[signer_pb2.JobTransition]:
        try:
            tail = await TransitionTail.start(self._sessions, cursor=request.cursor,
                                              job_id=request.job_id or None)
        except EsteiraError as error:
            await refuse(context, error)
        # The headers tell the client the starting point is fixed (nothing after it is missed).
        await context.send_initial_metadata(((WATCH_CURSOR_HEADER, str(tail.cursor)),))
        while True:
            for row, cursor in await tail.poll():
                yield messages.transition(row, cursor)
            await asyncio.sleep(self._watch_poll)


async def _drain(request_iterator: AsyncIterator[Request]) -> None:
    """Read what the client still sends (briefly) before refusing: a refusal that meets a send
    in flight reaches the client as INTERNAL "Internal error from Core", not as our status."""
    with contextlib.suppress(Exception):  # what is left is discarded either way
        async with asyncio.timeout(REFUSAL_DRAIN_SECONDS):
            async for _ in request_iterator:
                pass


async def _chunks(request_iterator: AsyncIterator[Request]) -> AsyncIterator[bytes]:
    async for message in request_iterator:
        if message.WhichOneof("payload") != "chunk":
            raise EsteiraError(ErrorCode.REQUEST_INVALID,
                               "Only the first message carries metadata; send bytes after it.")
        yield message.chunk


def add_signer(server: grpc.aio.Server, settings: Settings,
               sessions: async_sessionmaker[AsyncSession],
               temporal: Callable[[], Awaitable[Client]]) -> str:
    """Register the signer service; its full name (for health and reflection)."""
    signer_pb2_grpc.add_SignerServiceServicer_to_server(
        SignerServicer(settings, sessions, temporal), server)
    return signer_pb2.DESCRIPTOR.services_by_name["SignerService"].full_name
