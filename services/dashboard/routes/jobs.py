"""Jobs: the live table, uploads, the job page with its timeline, retry, cancel, delete."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from starlette.datastructures import UploadFile

from activities.signer.contracts.jobs import JobStatus, job_workflow_id
from activities.signer.models.jobs import Job
from activities.signer.operator import JobFilter
from services.app_context import SignerFace
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.web import next_page_url, redirect, render
from shared.errors import EsteiraError
from shared.paging import Page

router = APIRouter()
STATUSES = [s.value for s in JobStatus]
PAGE_SIZE = 100
CANCEL_EFFECT = {
    JobStatus.QUEUED: "The job leaves the queue before any worker claims it.",
    JobStatus.AWAITING_APPROVAL: (
        "The wait for approvers ends; the staged copy moves from processing/ to error/ and the "
        "approval snapshot is kept for the audit."),
    JobStatus.AWAITING_SIGNER: (
        "The job is canceled here first; then the remote Lacuna Signer document is canceled on "
        "a best-effort basis (a remote failure is logged and does not undo the cancellation)."),
}


def _filters(request: Request) -> JobFilter:
    query = request.query_params
    return JobFilter(statuses=[s for s in query.getlist("status") if s in STATUSES],
                     profile=query.get("profile") or None, folder=query.get("folder") or None,
                     text=query.get("text") or None)


async def _page(request: Request, signer: SignerFace) -> Page[Job]:
    return await signer.jobs.page(_filters(request), limit=PAGE_SIZE,
                                  cursor=request.query_params.get("cursor") or None)


@router.get("/", include_in_schema=False)
async def home() -> RedirectResponse:
    """The dashboard opens on the jobs table."""
    return RedirectResponse("/jobs", status_code=303)


@router.get("/jobs", response_class=HTMLResponse, include_in_schema=False)
async def jobs_page(request: Request, signer: SignerFace) -> HTMLResponse:
    """The jobs table with filters, the upload dialog, live refresh and the next page."""
    profiles = [view.row for view in await signer.profiles.all() if view.row.enabled]
    page = await _page(request, signer)
    return render(request, "jobs.html", page=page, filters=_filters(request),
                  statuses=STATUSES, profiles=profiles,
                  upload_enabled=signer.intake.upload_enabled, query=request.url.query,
                  next_url=next_page_url(request, "/jobs", page.next_cursor))


@router.get("/jobs/rows", response_class=HTMLResponse, include_in_schema=False)
async def jobs_rows(request: Request, signer: SignerFace) -> HTMLResponse:
    """The table body alone, for htmx polling."""
    return render(request, "_job_rows.html", page=await _page(request, signer))


@router.post("/jobs/upload", response_class=HTMLResponse, include_in_schema=False)
async def upload(request: Request, signer: SignerFace, form: CheckedForm) -> HTMLResponse:
    """Each file through the same upload as `POST /api/files`; a report line per file."""
    profile = str(form.get("profile") or "") or None
    report = []
    for item in form.getlist("files"):
        if not isinstance(item, UploadFile) or not item.filename:
            continue
        try:
            job = await signer.intake.upload(raw_name=item.filename, profile=profile,
                                             content=item)
            report.append({"file_name": item.filename, "job": job, "error": None})
        except EsteiraError as exc:
            report.append({"file_name": item.filename, "job": None, "error": exc})
    return render(request, "upload_report.html", report=report)


@router.get("/jobs/{job_id}", response_class=HTMLResponse, include_in_schema=False)
async def job_page(request: Request, signer: SignerFace, job_id: str) -> HTMLResponse:
    """One job: timeline, error, family, files to download, actions."""
    try:
        detail = await signer.jobs.detail(job_id)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    status = JobStatus(detail.job.status) if detail.job.status in STATUSES else None
    # Plain links to the REST download, which takes this session too: no script needed.
    files = [(f, f"/api/jobs/{quote(job_id, safe='')}/files/{quote(f.name)}")
             for f in await signer.downloads.files(job_id)]
    return render(request, "job.html", detail=detail, job=detail.job, files=files,
                  can_cancel=detail.cancelable, cancel_effect=CANCEL_EFFECT.get(status, ""),
                  can_retry=detail.retriable, can_delete=detail.deletable,
                  workflow_id=job_workflow_id(job_id))


@router.post("/jobs/{job_id}/cancel", include_in_schema=False)
async def cancel(request: Request, signer: SignerFace, job_id: str,
                 form: CheckedForm) -> RedirectResponse:
    """Cancel, after the confirmation dialog."""
    reason = str(form.get("reason") or "").strip() or None
    try:
        await signer.jobs.cancel(job_id, reason=reason, actor=actor(request))
    except EsteiraError as exc:
        return redirect(request, f"/jobs/{job_id}", error=exc)
    return redirect(request, f"/jobs/{job_id}", notice="Job canceled.")


@router.post("/jobs/{job_id}/retry", include_in_schema=False)
async def retry(request: Request, signer: SignerFace, job_id: str,
                _form: CheckedForm) -> RedirectResponse:
    """A new job for a failed one; the page of the new job follows."""
    try:
        job = await signer.jobs.retry(job_id)
    except EsteiraError as exc:
        return redirect(request, f"/jobs/{job_id}", error=exc)
    return redirect(request, f"/jobs/{job.id}", notice=f"Retry queued as job {job.id}.")


@router.post("/jobs/{job_id}/delete", include_in_schema=False)
async def delete(request: Request, signer: SignerFace, job_id: str,
                 form: CheckedForm) -> RedirectResponse:
    """Delete one job (no REST route by design); the notice says what went and what stayed."""
    reason = str(form.get("reason") or "").strip() or None
    try:
        report = await signer.jobs.delete(job_id, actor=actor(request), reason=reason)
    except EsteiraError as exc:
        return redirect(request, f"/jobs/{job_id}", error=exc)
    return redirect(request, "/jobs", notice=(
        f"Job {job_id} deleted. Removed: {', '.join(report.removed) or 'nothing'}. "
        f"Kept: {', '.join(report.kept) or 'nothing'}."))
