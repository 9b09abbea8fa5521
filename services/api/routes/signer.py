"""The signer's operator API: pipeline, jobs, uploads, rescan, folders, profiles, events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from pydantic import BaseModel
from sqlalchemy import func, or_
from sqlmodel import select

from activities.signer.enqueue import Enqueuer
from activities.signer.operator import (
    clear,
    commands,
    intake,
    jobs,
    pipeline_control,
    profiles_admin,
    upload,
)
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from services.api.context import ApiContext
from services.api.routes import signer_views as views
from shared.db.models import OperationalEvent
from shared.db.signer_models import InputFolderState, SigningProfile

router = APIRouter(prefix="/api", tags=["signer"])
_COPY_CHUNK = 1024 * 1024


class PauseRequest(BaseModel):
    """Body of `POST /api/pipeline/pause`."""

    reason: str | None = None


class CancelRequest(BaseModel):
    """Body of `POST /api/jobs/{id}/cancel` (optional)."""

    reason: str | None = None


def _ctx(request: Request) -> ApiContext:
    return request.app.state.context


def _actor(request: Request) -> str:
    return getattr(request.state, "actor", "anonymous")


async def _enqueuer(ctx: ApiContext) -> Enqueuer:
    return Enqueuer.from_settings(JobRepository(ctx.sessions),
                                  StorageTree(ctx.settings.storage_root), await ctx.temporal(),
                                  ctx.settings)


@router.post("/pipeline/pause")
async def pause(request: Request, body: PauseRequest | None = None) -> dict:
    """Hold the pipeline (idempotent); in-flight jobs finish."""
    view = await pipeline_control.set_paused(_ctx(request).sessions, paused=True,
                                             actor=_actor(request),
                                             reason=body.reason if body else None)
    return views.pipeline(view)


@router.post("/pipeline/resume")
async def resume(request: Request) -> dict:
    """Resume claiming (idempotent)."""
    view = await pipeline_control.set_paused(_ctx(request).sessions, paused=False,
                                             actor=_actor(request))
    return views.pipeline(view)


@router.get("/pipeline/state")
async def pipeline_state(request: Request) -> dict:
    """Paused or running, since when, by whom, why."""
    return views.pipeline(await pipeline_control.pipeline_state(_ctx(request).sessions))


@router.get("/jobs")
async def list_jobs(
    request: Request,
    status: Annotated[list[str] | None, Query()] = None,
    profile: str | None = None, folder: str | None = None, text: str | None = None,
    created_from: Annotated[datetime | None, Query(alias="from")] = None,
    created_to: Annotated[datetime | None, Query(alias="to")] = None,
    limit: Annotated[int, Query(ge=1, le=jobs.MAX_PAGE)] = 50,
    cursor: str | None = None,
) -> dict:
    """Jobs newest first, filtered, with a cursor to the next page."""
    filters = jobs.JobFilter(statuses=status or [], profile=profile, folder=folder, text=text,
                             created_from=created_from, created_to=created_to)
    rows, next_cursor = await jobs.list_jobs(_ctx(request).sessions, filters, limit=limit,
                                             cursor=cursor)
    return {"items": [views.job_summary(job) for job in rows], "nextCursor": next_cursor}


@router.get("/jobs/{job_id}")
async def get_job(request: Request, job_id: str) -> dict:
    """One job with its history, parent, children, timings and output path."""
    return views.job_detail(await jobs.job_detail(_ctx(request).sessions, job_id))


@router.post("/jobs/{job_id}/cancel")
async def cancel_job(request: Request, job_id: str, body: CancelRequest | None = None) -> dict:
    """Cancel a Queued / AwaitingApproval / AwaitingSigner job; its input stays."""
    ctx = _ctx(request)
    job = await commands.cancel_job(JobRepository(ctx.sessions), await ctx.temporal(), job_id,
                                    reason=body.reason if body else None, actor=_actor(request))
    return views.job_summary(job)


@router.post("/jobs/{job_id}/retry", status_code=201)
async def retry_job(request: Request, job_id: str) -> dict:
    """A new job for a Failed one (same file, the profile it recorded, ParentJobId)."""
    ctx = _ctx(request)
    new_id = await commands.retry_job(JobRepository(ctx.sessions), await _enqueuer(ctx), job_id)
    return views.job_summary(await JobRepository(ctx.sessions).get(new_id))


@router.post("/files", status_code=201)
async def upload_file(request: Request, file: Annotated[UploadFile, File()],
                      profile: Annotated[str | None, Form()] = None) -> dict:
    """Queue an uploaded file: same size limit, name sanitization and checks as the watcher."""
    ctx = _ctx(request)
    repository = JobRepository(ctx.sessions)
    job_id = await upload.receive_upload(repository, ctx.settings, raw_name=file.filename or "",
                                         profile=profile, chunks=_chunks(file),
                                         enqueuer=lambda: _enqueuer(ctx))
    return views.job_summary(await repository.get(job_id))


async def _chunks(file: UploadFile) -> AsyncIterator[bytes]:
    while chunk := await file.read(_COPY_CHUNK):
        yield chunk


@router.delete("/jobs")
async def clear_jobs(request: Request) -> dict:
    """Clear Jobs: every job whatever its status, its files, and the events before it."""
    ctx = _ctx(request)
    result = await clear.clear_jobs(ctx.sessions, StorageTree(ctx.settings.storage_root),
                                    actor=_actor(request))
    return {**asdict(result), "message": result.message}


@router.post("/rescan")
async def rescan(request: Request, folder: str | None = None) -> dict:
    """Queue every file of the input folder(s) that isn't an active job."""
    ctx = _ctx(request)
    rows = await intake.rescan(await _enqueuer(ctx), JobRepository(ctx.sessions), ctx.settings,
                               folder)
    return views.rescan_answer(rows)


@router.get("/folders")
async def list_folders(request: Request) -> list[dict]:
    """Each configured input folder: Running, Stopped (with its last error) or Unassigned."""
    ctx = _ctx(request)
    async with ctx.sessions() as session:
        profiles = (await session.exec(select(SigningProfile))).all()
        states = {s.name: s for s in (await session.exec(select(InputFolderState))).all()}
    owners = {p.input_folder.lower(): p.name for p in profiles if p.input_folder}
    return [views.folder(f.name, str(ctx.settings.input_folder_path(f)),
                         owners.get(f.name.lower()), states.get(f.name))
            for f in ctx.settings.effective_inputs]


@router.get("/profiles")
async def list_profiles(request: Request) -> list[dict]:
    """Every signing profile (never a secret, only where it comes from)."""
    async with _ctx(request).sessions() as session:
        rows = (await session.exec(select(SigningProfile).order_by(SigningProfile.name))).all()
    return [views.profile(row) for row in rows]


@router.post("/profiles", status_code=201)
async def create_profile(request: Request, body: dict[str, Any]) -> dict:
    """A new profile; a folder must be configured on this host and not used by another."""
    ctx = _ctx(request)
    row = await profiles_admin.create_profile(ctx.sessions, ctx.settings, body,
                                              actor=_actor(request))
    return views.profile(row)


@router.patch("/profiles/{name}")
async def edit_profile(request: Request, name: str, body: dict[str, Any]) -> dict:
    """Edit behaviour (folder, enabled, checks, encryption, format); refusals name the owner."""
    ctx = _ctx(request)
    row = await profiles_admin.edit_profile(ctx.sessions, ctx.settings, name, body,
                                            actor=_actor(request))
    return views.profile(row)


@router.get("/events")
async def list_events(
    request: Request, type: Annotated[list[str] | None, Query()] = None,
    created_from: Annotated[datetime | None, Query(alias="from")] = None,
    created_to: Annotated[datetime | None, Query(alias="to")] = None,
    text: str | None = None, limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[dict]:
    """The operational events trail, newest first."""
    query = select(OperationalEvent)
    if type:
        query = query.where(OperationalEvent.type.in_(type))
    if created_from:
        query = query.where(OperationalEvent.at >= created_from)
    if created_to:
        query = query.where(OperationalEvent.at < created_to)
    if text:
        needle = text.lower()
        query = query.where(or_(func.lower(OperationalEvent.message).contains(needle),
                                func.lower(OperationalEvent.actor).contains(needle)))
    query = query.order_by(OperationalEvent.at.desc(), OperationalEvent.id.desc()).limit(limit)
    async with _ctx(request).sessions() as session:
        return [views.event(row) for row in (await session.exec(query)).all()]



