"""The signer's operator API: pipeline, jobs, uploads, rescan, folders, profiles, events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from pydantic import BaseModel

from activities.signer.operator import (
    clear,
    commands,
    events,
    folders,
    intake,
    jobs,
    pipeline_control,
    profiles_admin,
    upload,
    wiring,
)
from activities.signer.operator.errors import refuse
from services.api.routes import signer_views as views
from services.api.routes.signer_schemas import (
    Cleared,
    Event,
    Folder,
    JobDetail,
    JobPage,
    JobSummary,
    PipelineState,
    Profile,
    RescanAnswer,
)
from services.app_context import ApiContext, ContextDep
from shared.contracts.signer import JobStatus, SignerErrorCode
from shared.instances import cluster_instance_name

router = APIRouter(prefix="/api", tags=["signer"])
_COPY_CHUNK = 1024 * 1024


class PauseRequest(BaseModel):
    """Body of `POST /api/pipeline/pause`."""

    reason: str | None = None


class CancelRequest(BaseModel):
    """Body of `POST /api/jobs/{id}/cancel` (optional)."""

    reason: str | None = None


def _actor(request: Request) -> str:
    return getattr(request.state, "actor", "anonymous")


# Who the events trail names: `api-key`, or `operator:<name>` from the dashboard.
ActorDep = Annotated[str, Depends(_actor)]


async def _enqueuer(ctx: ApiContext) -> wiring.Enqueuer:
    return wiring.enqueuer(ctx.sessions, ctx.settings, await ctx.temporal())


@router.post("/pipeline/pause", response_model=PipelineState)
async def pause(ctx: ContextDep, actor: ActorDep, body: PauseRequest | None = None) -> dict:
    """Hold the pipeline (idempotent); in-flight jobs finish."""
    view = await pipeline_control.set_paused(ctx.sessions, paused=True, actor=actor,
                                             reason=body.reason if body else None)
    return views.pipeline(view)


@router.post("/pipeline/resume", response_model=PipelineState)
async def resume(ctx: ContextDep, actor: ActorDep) -> dict:
    """Resume claiming (idempotent)."""
    view = await pipeline_control.set_paused(ctx.sessions, paused=False, actor=actor)
    return views.pipeline(view)


@router.get("/pipeline/state", response_model=PipelineState)
async def pipeline_state(ctx: ContextDep) -> dict:
    """Paused or running, since when, by whom, why."""
    return views.pipeline(await pipeline_control.pipeline_state(ctx.sessions))


@router.get("/jobs", response_model=JobPage)
async def list_jobs(
    ctx: ContextDep,
    status: Annotated[list[JobStatus] | None, Query()] = None,
    profile: str | None = None, folder: str | None = None, text: str | None = None,
    created_from: Annotated[datetime | None, Query(alias="from")] = None,
    created_to: Annotated[datetime | None, Query(alias="to")] = None,
    limit: Annotated[int, Query(ge=1, le=jobs.MAX_PAGE)] = 50,
    cursor: str | None = None,
) -> dict:
    """Jobs newest first, filtered, with a cursor to the next page."""
    filters = jobs.JobFilter(statuses=[str(s) for s in status or ()], profile=profile,
                             folder=folder, text=text, created_from=created_from,
                             created_to=created_to)
    rows, next_cursor = await jobs.list_jobs(ctx.sessions, filters, limit=limit, cursor=cursor)
    return {"items": [views.job_summary(job) for job in rows], "nextCursor": next_cursor}


@router.get("/jobs/{job_id}", response_model=JobDetail)
async def get_job(ctx: ContextDep, job_id: str) -> dict:
    """One job with its history, parent, children, timings and output path."""
    return views.job_detail(await jobs.job_detail(ctx.sessions, job_id))


@router.post("/jobs/{job_id}/cancel", response_model=JobSummary)
async def cancel_job(ctx: ContextDep, actor: ActorDep, job_id: str,
                     body: CancelRequest | None = None) -> dict:
    """Cancel a Queued / AwaitingApproval / AwaitingSigner job; its input stays."""
    job = await commands.cancel_job(wiring.repository(ctx.sessions), await ctx.temporal(),
                                    job_id, reason=body.reason if body else None, actor=actor)
    return views.job_summary(job)


@router.post("/jobs/{job_id}/retry", status_code=201, response_model=JobSummary)
async def retry_job(ctx: ContextDep, job_id: str) -> dict:
    """A new job for a Failed one (same file, the profile it recorded, ParentJobId)."""
    repository = wiring.repository(ctx.sessions)
    new_id = await commands.retry_job(repository, await _enqueuer(ctx), job_id)
    return views.job_summary(await repository.get(new_id))


@router.post("/files", status_code=201, response_model=JobSummary)
async def upload_file(ctx: ContextDep, file: Annotated[UploadFile, File()],
                      profile: Annotated[str | None, Form()] = None) -> dict:
    """Queue an uploaded file: same size limit, name sanitization and checks as the watcher."""
    repository = wiring.repository(ctx.sessions)
    job_id = await upload.receive_upload(repository, ctx.settings, raw_name=file.filename or "",
                                         profile=profile, chunks=_chunks(file),
                                         enqueuer=lambda: _enqueuer(ctx))
    return views.job_summary(await repository.get(job_id))


async def _chunks(file: UploadFile) -> AsyncIterator[bytes]:
    while chunk := await file.read(_COPY_CHUNK):
        yield chunk


@router.delete("/jobs", response_model=Cleared)
async def clear_jobs(ctx: ContextDep, actor: ActorDep) -> dict:
    """Clear Jobs: every job whatever its status, its files, and the events before it."""
    result = await clear.clear_jobs(ctx.sessions, wiring.storage(ctx.settings), actor=actor)
    return {**asdict(result), "message": result.message}


@router.post("/rescan", response_model=RescanAnswer)
async def rescan(ctx: ContextDep, folder: str | None = None) -> dict:
    """Queue every file of the input folder(s) that isn't an active job."""
    rows = await intake.rescan(await _enqueuer(ctx), wiring.repository(ctx.sessions),
                               ctx.settings, folder)
    return views.rescan_answer(rows)


@router.get("/folders", response_model=list[Folder])
async def list_folders(ctx: ContextDep) -> list[dict]:
    """Each configured input folder: Running, Stopped (with its last error) or Unassigned."""
    overview = await folders.folder_overview(ctx.sessions, ctx.settings)
    # Every instance watches every folder: `instance` says which one answered.
    me = cluster_instance_name(ctx.settings.cluster)
    return [{**views.folder(f.name, str(f.path), f.owner, f.state), "instance": me}
            for f in overview.folders]


@router.get("/profiles", response_model=list[Profile])
async def list_profiles(ctx: ContextDep) -> list[dict]:
    """Every signing profile (never a secret, only where it comes from)."""
    return [views.profile(row) for row in await profiles_admin.list_profiles(ctx.sessions)]


@router.get("/profiles/{name}", response_model=Profile)
async def get_profile(ctx: ContextDep, name: str) -> dict:
    """One signing profile (KEYLESS shows `keyless: true`, `certSource: none`)."""
    row = await profiles_admin.get_profile(ctx.sessions, name)
    if row is None:
        raise refuse(SignerErrorCode.PROFILE_NOT_FOUND, f"No signing profile {name!r}.")
    return views.profile(row)


@router.post("/profiles", status_code=201, response_model=Profile)
async def create_profile(ctx: ContextDep, actor: ActorDep, body: dict[str, Any]) -> dict:
    """A new profile; a folder must be configured on this host and not used by another."""
    row = await profiles_admin.create_profile(ctx.sessions, ctx.settings, body, actor=actor)
    return views.profile(row)


@router.patch("/profiles/{name}", response_model=Profile)
async def edit_profile(ctx: ContextDep, actor: ActorDep, name: str,
                       body: dict[str, Any]) -> dict:
    """Edit behaviour (folder, enabled, checks, encryption, format); refusals name the owner."""
    row = await profiles_admin.edit_profile(ctx.sessions, ctx.settings, name, body,
                                            actor=actor)
    return views.profile(row)


@router.get("/events", response_model=list[Event])
async def list_events(
    ctx: ContextDep, type: Annotated[list[str] | None, Query()] = None,
    created_from: Annotated[datetime | None, Query(alias="from")] = None,
    created_to: Annotated[datetime | None, Query(alias="to")] = None,
    text: str | None = None, limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[dict]:
    """The operational events trail, newest first."""
    filters = events.EventFilter(types=type or [], created_from=created_from,
                                 created_to=created_to, text=text)
    return [views.event(row) for row in await events.list_events(ctx.sessions, filters,
                                                                 limit=limit)]



