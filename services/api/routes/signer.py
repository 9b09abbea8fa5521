"""The signer's operator API: pipeline, jobs, uploads, rescan."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from starlette.datastructures import UploadFile as StarletteUpload

from activities.signer.contracts.jobs import JobStatus
from activities.signer.operator import JobFilter
from services.api.routes.signer_schemas import (
    Cleared,
    JobDetail,
    JobSummary,
    PipelineState,
    ReasonBody,
    RescanAnswer,
)
from services.app_context import SignerFace
from shared.errors import ErrorCode, EsteiraError
from shared.paging import MAX_PAGE
from shared.wire import PageOut

router = APIRouter(prefix="/api", tags=["signer"])


def _actor(request: Request) -> str:
    return getattr(request.state, "actor", "anonymous")


# Who the events trail names: `api-key`, or `operator:<name>` from the dashboard.
ActorDep = Annotated[str, Depends(_actor)]


@router.post("/pipeline/pause", response_model=PipelineState)
async def pause(signer: SignerFace, actor: ActorDep,
                body: ReasonBody | None = None) -> PipelineState:
    """Hold the pipeline (idempotent); in-flight jobs finish."""
    view = await signer.pipeline.pause(actor=actor, reason=body.reason if body else None)
    return PipelineState.of(view)


@router.post("/pipeline/resume", response_model=PipelineState)
async def resume(signer: SignerFace, actor: ActorDep) -> PipelineState:
    """Resume claiming (idempotent)."""
    return PipelineState.of(await signer.pipeline.resume(actor=actor))


@router.get("/pipeline/state", response_model=PipelineState)
async def pipeline_state(signer: SignerFace) -> PipelineState:
    """Paused or running, since when, by whom, why."""
    return PipelineState.of(await signer.pipeline.state())


@router.get("/jobs", response_model=PageOut[JobSummary])
async def list_jobs(
    signer: SignerFace,
    status: Annotated[list[JobStatus] | None, Query()] = None,
    profile: str | None = None, folder: str | None = None, text: str | None = None,
    created_from: Annotated[datetime | None, Query(alias="from")] = None,
    created_to: Annotated[datetime | None, Query(alias="to")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
    cursor: str | None = None,
) -> PageOut[JobSummary]:
    """Jobs newest first, filtered, with a cursor to the next page."""
    filters = JobFilter(statuses=[str(s) for s in status or ()], profile=profile,
                        folder=folder, text=text, created_from=created_from,
                        created_to=created_to)
    page = await signer.jobs.page(filters, limit=limit, cursor=cursor)
    return PageOut[JobSummary](items=[JobSummary.of(job) for job in page.items],
                               next_cursor=page.next_cursor)


@router.get("/jobs/{job_id}", response_model=JobDetail)
async def get_job(signer: SignerFace, job_id: str) -> JobDetail:
    """One job with its history, parent, children, timings and output path."""
    return JobDetail.of_detail(await signer.jobs.detail(job_id))


@router.post("/jobs/{job_id}/cancel", response_model=JobSummary)
async def cancel_job(signer: SignerFace, actor: ActorDep, job_id: str,
                     body: ReasonBody | None = None) -> JobSummary:
    """Cancel a Queued / AwaitingApproval / AwaitingSigner job; its input stays."""
    job = await signer.jobs.cancel(job_id, reason=body.reason if body else None, actor=actor)
    return JobSummary.of(job)


@router.post("/jobs/{job_id}/retry", status_code=201, response_model=JobSummary)
async def retry_job(signer: SignerFace, job_id: str) -> JobSummary:
    """A new job for a Failed one (same file, the profile it recorded, ParentJobId)."""
    return JobSummary.of(await signer.jobs.retry(job_id))


@router.post("/files", status_code=201, response_model=JobSummary)
async def upload_file(request: Request, signer: SignerFace,
                      file: Annotated[UploadFile, File()],
                      profile: Annotated[str | None, Form()] = None) -> JobSummary:
    """Queue an uploaded file: same size limit, name sanitization and checks as the watcher.

    One file per request: a second file part is refused, not silently dropped.
    """
    form = await request.form()  # already parsed for the parameters: no second read
    if sum(isinstance(value, StarletteUpload) for _key, value in form.multi_items()) > 1:
        raise EsteiraError(ErrorCode.REQUEST_INVALID,
                           "POST /api/files takes one file per request; send each file in "
                           "its own request.")
    job = await signer.intake.upload(raw_name=file.filename or "", profile=profile,
                                     content=file)
    return JobSummary.of(job)


@router.delete("/jobs", response_model=Cleared)
async def clear_jobs(signer: SignerFace, actor: ActorDep) -> Cleared:
    """Clear Jobs: every job whatever its status, its files, and the events before it."""
    return Cleared.of(await signer.jobs.clear(actor=actor))


@router.post("/rescan", response_model=RescanAnswer)
async def rescan(signer: SignerFace, folder: str | None = None) -> RescanAnswer:
    """Queue every file of the input folder(s) that isn't an active job."""
    return RescanAnswer.of(await signer.intake.rescan(folder))
