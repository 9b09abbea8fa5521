"""System: pause / resume, queue, certificate source, last shutdown, instances, danger zone."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy import func
from sqlmodel import select
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

from activities.signer.operator import jobs, profiles_admin
from services.api.routes import signer as rest
from services.api.routes import signer_instances as rest_instances
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.web import context, redirect, render
from shared.contracts.signer import task_queues
from shared.db.models import Instance
from shared.errors import EsteiraError
from shared.instances import instance_id

router = APIRouter()
# The page must render while Temporal is down; the pollers card then says so.
POLLERS_TIMEOUT_SECONDS = 2.0
WAITING = ("Queued", "AwaitingApproval", "AwaitingSigner")


@dataclass(frozen=True)
class Poller:
    """A worker polling one of the signer's task queues, as Temporal reports it."""

    task_queue: str
    identity: str
    last_access: str | None


async def _pollers(request: Request) -> tuple[list[Poller], str | None]:
    ctx = context(request)
    try:
        client = await asyncio.wait_for(ctx.temporal(), POLLERS_TIMEOUT_SECONDS)
        found = []
        for queue in task_queues(ctx.settings.pipeline.task_queue_suffix):
            for kind in (TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
                         TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY):
                answer = await client.workflow_service.describe_task_queue(
                    DescribeTaskQueueRequest(namespace=client.namespace,
                                             task_queue=TaskQueue(name=queue),
                                             task_queue_type=kind),
                    timeout=timedelta(seconds=POLLERS_TIMEOUT_SECONDS))
                found += [Poller(queue, p.identity,
                                 p.last_access_time.ToDatetime().isoformat()
                                 if p.HasField("last_access_time") else None)
                          for p in answer.pollers]
        return found, None
    except Exception as exc:
        return [], f"Temporal did not answer: {type(exc).__name__}"


@router.get("/system", response_class=HTMLResponse, include_in_schema=False)
async def system_page(request: Request) -> HTMLResponse:
    """Everything an operator checks before and after touching the pipeline."""
    ctx = context(request)
    settings = ctx.settings
    counts = await jobs.status_counts(ctx.sessions)
    default = await profiles_admin.get_profile(ctx.sessions, settings.signing.default_profile)
    async with ctx.sessions() as session:
        instances = (await session.exec(select(Instance).order_by(Instance.role,
                                                                  Instance.instance_id))).all()
        last_shutdown = (await session.exec(select(func.max(Instance.stopped_at)))).one()
    pollers, pollers_error = await _pollers(request)
    return render(request, "system.html", pipeline=await rest.pipeline_state(ctx),
                  queue=sum(counts.get(s, 0) for s in WAITING), counts=counts,
                  default_profile=default, instances=instances, me=instance_id("api"),
                  last_shutdown=last_shutdown, pollers=pollers, pollers_error=pollers_error,
                  recent=await rest.list_events(ctx, type=None, created_from=None,
                                                created_to=None, text=None, limit=10),
                  cluster=await rest_instances.list_instances(ctx))


@router.post("/system/pause", include_in_schema=False)
async def pause(request: Request, form: CheckedForm) -> RedirectResponse:
    """Pause with an optional reason (same handler as `POST /api/pipeline/pause`)."""
    reason = str(form.get("reason") or "").strip() or None
    try:
        await rest.pause(context(request), actor(request), rest.PauseRequest(reason=reason))
    except EsteiraError as exc:
        return redirect(request, "/system", error=exc)
    return redirect(request, "/system", notice="Pipeline paused.")


@router.post("/system/resume", include_in_schema=False)
async def resume(request: Request, _form: CheckedForm) -> RedirectResponse:
    """Resume claiming."""
    try:
        await rest.resume(context(request), actor(request))
    except EsteiraError as exc:
        return redirect(request, "/system", error=exc)
    return redirect(request, "/system", notice="Pipeline resumed.")


@router.post("/system/instances/{name}/stand-down", include_in_schema=False)
async def stand_down(request: Request, _form: CheckedForm, name: str) -> RedirectResponse:
    """Stand an instance down (same handler as `POST /api/instances/{name}/stand-down`)."""
    try:
        await rest_instances.stand_down(context(request), actor(request), name)
    except EsteiraError as exc:
        return redirect(request, "/system", error=exc)
    return redirect(request, "/system", notice=f"Instance {name} stood down.")


@router.post("/system/instances/{name}/resume", include_in_schema=False)
async def resume_instance(request: Request, _form: CheckedForm, name: str) -> RedirectResponse:
    """Resume a stood-down instance."""
    try:
        await rest_instances.resume(context(request), actor(request), name)
    except EsteiraError as exc:
        return redirect(request, "/system", error=exc)
    return redirect(request, "/system", notice=f"Instance {name} resumed.")


@router.post("/system/clear-jobs", include_in_schema=False)
async def clear_jobs(request: Request, _form: CheckedForm) -> RedirectResponse:
    """Danger zone -> Clear Jobs, after the confirmation dialog."""
    try:
        answer = await rest.clear_jobs(context(request), actor(request))
    except EsteiraError as exc:
        return redirect(request, "/system", error=exc)
    return redirect(request, "/system", notice=answer["message"])
