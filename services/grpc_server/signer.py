"""`esteira.signer.v1.SignerService`: the signer's face over gRPC."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc

from activities.signer.operator import JobFilter, SignerOperations
from services.grpc_server import signer_messages as messages
from services.grpc_server.gen.esteira.signer.v1 import signer_pb2, signer_pb2_grpc
from services.grpc_server.refusal import refusals, refuse
from shared.errors import ErrorCode, EsteiraError
from shared.paging import MAX_PAGE

ACTOR = "grpc"
# How often WatchJobs looks for new transitions in the job history.
WATCH_POLL_SECONDS = 0.5
WATCH_CURSOR_HEADER = "x-watch-cursor"
Request = signer_pb2.SubmitFileRequest
# How long a refused upload's remaining stream is read before the refusal is sent.
REFUSAL_DRAIN_SECONDS = 5.0


class SignerServicer(signer_pb2_grpc.SignerServiceServicer):
    """Thin: decode, call the face, map error codes to google.rpc.Status."""

    def __init__(self, signer: SignerOperations, *,
                 watch_poll_seconds: float = WATCH_POLL_SECONDS) -> None:
        self._signer = signer
        self._watch_poll = watch_poll_seconds

    @refusals
    async def SubmitFile(self, request_iterator: AsyncIterator[Request],
                         context: grpc.aio.ServicerContext) -> signer_pb2.Job:
        try:
            first = await anext(request_iterator, None)
            if first is None or first.WhichOneof("payload") != "metadata":
                raise EsteiraError(ErrorCode.REQUEST_INVALID,
                                   "The first message must carry the file's metadata.")
            job = await self._signer.intake.upload(
                raw_name=first.metadata.file_name, profile=first.metadata.profile or None,
                content=_chunks(request_iterator))
        except EsteiraError:
            await _drain(request_iterator)
            raise
        return messages.job(job)

    @refusals
    async def GetJob(self, request: signer_pb2.GetJobRequest,
                     context: grpc.aio.ServicerContext) -> signer_pb2.JobDetail:
        return messages.job_detail(await self._signer.jobs.detail(request.job_id))

    @refusals
    async def ListJobs(self, request: signer_pb2.ListJobsRequest,
                       context: grpc.aio.ServicerContext) -> signer_pb2.ListJobsResponse:
        if not 0 <= request.limit <= MAX_PAGE:
            raise EsteiraError(ErrorCode.REQUEST_INVALID,
                               f"limit must be between 1 and {MAX_PAGE} (0: 50).")
        filters = JobFilter(
            statuses=list(request.status), profile=request.profile or None,
            folder=request.folder or None, text=request.text or None,
            created_from=messages.moment(request.created_from, request.HasField("created_from")),
            created_to=messages.moment(request.created_to, request.HasField("created_to")))
        page = await self._signer.jobs.page(filters, limit=request.limit or 50,
                                            cursor=request.cursor or None)
        return signer_pb2.ListJobsResponse(items=[messages.job(row) for row in page.items],
                                           next_cursor=page.next_cursor or "")

    @refusals
    async def CancelJob(self, request: signer_pb2.CancelJobRequest,
                        context: grpc.aio.ServicerContext) -> signer_pb2.Job:
        job = await self._signer.jobs.cancel(request.job_id, reason=request.reason or None,
                                             actor=ACTOR)
        return messages.job(job)

    @refusals
    async def RetryJob(self, request: signer_pb2.RetryJobRequest,
                       context: grpc.aio.ServicerContext) -> signer_pb2.Job:
        return messages.job(await self._signer.jobs.retry(request.job_id))

    @refusals
    async def DeleteJob(self, request: signer_pb2.DeleteJobRequest,
                        context: grpc.aio.ServicerContext) -> signer_pb2.DeleteJobResponse:
        report = await self._signer.jobs.delete(request.job_id, actor=ACTOR,
                                                reason=request.reason or None)
        return signer_pb2.DeleteJobResponse(removed=report.removed, kept=report.kept)

    @refusals
    async def PausePipeline(self, request: signer_pb2.PausePipelineRequest,
                            context: grpc.aio.ServicerContext) -> signer_pb2.PipelineState:
        view = await self._signer.pipeline.pause(actor=ACTOR, reason=request.reason or None)
        return messages.pipeline(view)

    @refusals
    async def ResumePipeline(self, request: signer_pb2.ResumePipelineRequest,
                             context: grpc.aio.ServicerContext) -> signer_pb2.PipelineState:
        return messages.pipeline(await self._signer.pipeline.resume(actor=ACTOR))

    @refusals
    async def GetPipelineState(self, request: signer_pb2.GetPipelineStateRequest,
                               context: grpc.aio.ServicerContext) -> signer_pb2.PipelineState:
        return messages.pipeline(await self._signer.pipeline.state())

    async def WatchJobs(self, request: signer_pb2.WatchJobsRequest,
                        context: grpc.aio.ServicerContext
                        ) -> AsyncIterator[signer_pb2.JobTransition]:
        try:
            tail = await self._signer.jobs.follow(cursor=request.cursor,
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


def add_signer(server: grpc.aio.Server, signer: SignerOperations) -> str:
    """Register the signer service around the process's face; its full name (for health and
    reflection)."""
    signer_pb2_grpc.add_SignerServiceServicer_to_server(SignerServicer(signer), server)
    return signer_pb2.DESCRIPTOR.services_by_name["SignerService"].full_name
