"""Jobs: the live table, uploads, the job page with its timeline, retry, cancel, delete."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.datastructures import UploadFile

from activities.signer.operator import wiring
from activities.signer.operator.commands import CANCELABLE
from activities.signer.operator.delete_job import delete_job
from services.api.routes import signer as rest
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.web import context, redirect, render
from shared.contracts.signer import JobStatus, SignerErrorCode, job_workflow_id
from shared.contracts.signer_approvals import ApprovalErrorCode
from shared.errors import EsteiraError

router = APIRouter()
STATUSES = [s.value for s in JobStatus]
# Keys of the REST job detail the page lays out itself; anything else (approval decisions,
# CNAB240 lines, what later features add) is shown generically.
KNOWN_DETAIL_KEYS = {
    "id", "fileName", "status", "format", "profile", "folder", "source", "errorCode", "error",
    "parentJobId", "createdAt", "completedAt", "originalPath", "outputPath", "inputSize",
    "inputSha256", "instance", "children", "timings", "history"}
NOT_RETRIABLE = {ApprovalErrorCode.REJECTED.value, SignerErrorCode.FILE_ALREADY_PROCESSED.value}
CANCEL_EFFECT = {
    JobStatus.QUEUED: "The job leaves the queue before any worker claims it.",
    JobStatus.AWAITING_APPROVAL: (
        "The wait for approvers ends; the staged copy moves from processing/ to error/ and the "
        "approval snapshot is kept for the audit."),
    JobStatus.AWAITING_SIGNER: (
        "The job is canceled here first; then the remote Lacuna Signer document is canceled on "
        "a best-effort basis (a remote failure is logged and does not undo the cancellation)."),
}


def _filters(request: Request) -> dict:
    query = request.query_params
    return {"status": [s for s in query.getlist("status") if s in STATUSES],
            "profile": query.get("profile") or None, "folder": query.get("folder") or None,
            "text": query.get("text") or None}


async def _rows(request: Request) -> dict:
    return await rest.list_jobs(context(request), **_filters(request), limit=100)


@router.get("/", include_in_schema=False)
async def home() -> RedirectResponse:
    """The dashboard opens on the jobs table."""
    return RedirectResponse("/jobs", status_code=303)


@router.get("/jobs", response_class=HTMLResponse, include_in_schema=False)
async def jobs_page(request: Request) -> HTMLResponse:
    """The jobs table with filters, the upload dialog and live refresh."""
    profiles = [p for p in await rest.list_profiles(context(request)) if p["enabled"]]
    return render(request, "jobs.html", page=await _rows(request), filters=_filters(request),
                  statuses=STATUSES, profiles=profiles,
                  upload_enabled=context(request).settings.upload.enabled,
                  query=request.url.query)


@router.get("/jobs/rows", response_class=HTMLResponse, include_in_schema=False)
async def jobs_rows(request: Request) -> HTMLResponse:
    """The table body alone, for htmx polling."""
    return render(request, "_job_rows.html", page=await _rows(request))


@router.post("/jobs/upload", response_class=HTMLResponse, include_in_schema=False)
async def upload(request: Request, form: CheckedForm) -> HTMLResponse:
    """Each file through the REST upload handler; a report line per file."""
    profile = str(form.get("profile") or "") or None
    report = []
    for item in form.getlist("files"):
        if not isinstance(item, UploadFile) or not item.filename:
            continue
        try:
            job = await rest.upload_file(context(request), file=item, profile=profile)
            report.append({"fileName": item.filename, "job": job, "error": None})
        except EsteiraError as exc:
            report.append({"fileName": item.filename, "job": None, "error": exc})
    return render(request, "upload_report.html", report=report)


@router.get("/jobs/{job_id}", response_class=HTMLResponse, include_in_schema=False)
async def job_page(request: Request, job_id: str) -> HTMLResponse:
    """One job: timeline, error, family, extra sections, actions."""
    try:
        job = await rest.get_job(context(request), job_id)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    extra = {k: v for k, v in job.items() if k not in KNOWN_DETAIL_KEYS and v not in (None, [])}
    status = JobStatus(job["status"]) if job["status"] in STATUSES else None
    return render(request, "job.html", job=job, extra=extra,
                  can_cancel=status in CANCELABLE, cancel_effect=CANCEL_EFFECT.get(status, ""),
                  can_retry=status is JobStatus.FAILED and job["errorCode"] not in NOT_RETRIABLE,
                  can_delete=status not in (JobStatus.PROCESSING, JobStatus.VERIFYING),
                  workflow_id=job_workflow_id(job_id))


@router.post("/jobs/{job_id}/cancel", include_in_schema=False)
async def cancel(request: Request, job_id: str, form: CheckedForm) -> RedirectResponse:
    """Cancel through the REST handler, after the confirmation dialog."""
    reason = str(form.get("reason") or "").strip() or None
    try:
        await rest.cancel_job(context(request), actor(request), job_id,
                             rest.CancelRequest(reason=reason))
    except EsteiraError as exc:
        return redirect(request, f"/jobs/{job_id}", error=exc)
    return redirect(request, f"/jobs/{job_id}", notice="Job canceled.")


@router.post("/jobs/{job_id}/retry", include_in_schema=False)
async def retry(request: Request, job_id: str, _form: CheckedForm) -> RedirectResponse:
    """A new job for a failed one; the page of the new job follows."""
    try:
        job = await rest.retry_job(context(request), job_id)
    except EsteiraError as exc:
        return redirect(request, f"/jobs/{job_id}", error=exc)
    return redirect(request, f"/jobs/{job['id']}", notice=f"Retry queued as job {job['id']}.")


@router.post("/jobs/{job_id}/delete", include_in_schema=False)
async def delete(request: Request, job_id: str, form: CheckedForm) -> RedirectResponse:
    """Delete one job (no REST route by design); the notice says what went and what stayed."""
    ctx = context(request)
    reason = str(form.get("reason") or "").strip() or None
    try:
        report = await delete_job(wiring.repository(ctx.sessions),
                                  wiring.storage(ctx.settings), await ctx.temporal(),
                                  job_id, actor=actor(request), reason=reason)
    except EsteiraError as exc:
        return redirect(request, f"/jobs/{job_id}", error=exc)
    return redirect(request, "/jobs", notice=(
        f"Job {job_id} deleted. Removed: {', '.join(report.removed) or 'nothing'}. "
        f"Kept: {', '.join(report.kept) or 'nothing'}."))
