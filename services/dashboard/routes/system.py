"""System: pause / resume, queue, certificate source, last shutdown, instances, danger zone."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from activities.signer.contracts.jobs import JobStatus
from activities.signer.operator import EventFilter
from services.app_context import SignerFace
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.signer_charts import signer_charts
from services.dashboard.web import context, redirect, render
from shared.errors import EsteiraError
from shared.instances import instance_id

router = APIRouter()
WAITING = (JobStatus.QUEUED, JobStatus.AWAITING_APPROVAL, JobStatus.AWAITING_SIGNER)
RECENT_EVENTS = 10


@router.get("/system", response_class=HTMLResponse, include_in_schema=False)
async def system_page(request: Request, signer: SignerFace) -> HTMLResponse:
    """Everything an operator checks before and after touching the pipeline."""
    counts = await signer.jobs.status_counts()
    default = await signer.profiles.default()
    processes = await signer.instances.processes()
    pollers = await signer.pipeline.pollers()
    recent = await signer.events.page(EventFilter(), limit=RECENT_EVENTS)
    return render(request, "system.html", pipeline=await signer.pipeline.state(),
                  queue=sum(counts.get(s, 0) for s in WAITING), counts=counts,
                  default_profile=default.row if default else None,
                  instances=processes.rows, me=instance_id("api"),
                  last_shutdown=processes.last_shutdown, pollers=pollers.pollers,
                  pollers_error=pollers.error, recent=recent.items,
                  charts=await signer_charts(context(request).sessions),
                  cluster=await signer.instances.cluster())


@router.post("/system/pause", include_in_schema=False)
async def pause(request: Request, signer: SignerFace, form: CheckedForm) -> RedirectResponse:
    """Pause with an optional reason (as `POST /api/pipeline/pause` does)."""
    reason = str(form.get("reason") or "").strip() or None
    try:
        await signer.pipeline.pause(actor=actor(request), reason=reason)
    except EsteiraError as exc:
        return redirect(request, "/system", error=exc)
    return redirect(request, "/system", notice="Pipeline paused.")


@router.post("/system/resume", include_in_schema=False)
async def resume(request: Request, signer: SignerFace, _form: CheckedForm) -> RedirectResponse:
    """Resume claiming."""
    try:
        await signer.pipeline.resume(actor=actor(request))
    except EsteiraError as exc:
        return redirect(request, "/system", error=exc)
    return redirect(request, "/system", notice="Pipeline resumed.")


@router.post("/system/instances/{name}/stand-down", include_in_schema=False)
async def stand_down(request: Request, signer: SignerFace, _form: CheckedForm,
                     name: str) -> RedirectResponse:
    """Stand an instance down (as `POST /api/instances/{name}/stand-down` does)."""
    try:
        await signer.instances.stand_down(name, actor=actor(request))
    except EsteiraError as exc:
        return redirect(request, "/system", error=exc)
    return redirect(request, "/system", notice=f"Instance {name} stood down.")


@router.post("/system/instances/{name}/resume", include_in_schema=False)
async def resume_instance(request: Request, signer: SignerFace, _form: CheckedForm,
                          name: str) -> RedirectResponse:
    """Resume a stood-down instance."""
    try:
        await signer.instances.resume(name, actor=actor(request))
    except EsteiraError as exc:
        return redirect(request, "/system", error=exc)
    return redirect(request, "/system", notice=f"Instance {name} resumed.")


@router.post("/system/clear-jobs", include_in_schema=False)
async def clear_jobs(request: Request, signer: SignerFace,
                     _form: CheckedForm) -> RedirectResponse:
    """Danger zone -> Clear Jobs, after the confirmation dialog."""
    try:
        result = await signer.jobs.clear(actor=actor(request))
    except EsteiraError as exc:
        return redirect(request, "/system", error=exc)
    return redirect(request, "/system", notice=result.message)
