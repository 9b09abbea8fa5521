"""Input folders: a card per folder with its status chip, and the rescan button."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from activities.signer.operator import RescanReport
from services.app_context import SignerFace
from services.dashboard.guard import CheckedForm
from services.dashboard.web import redirect, render
from shared.errors import EsteiraError

router = APIRouter()


def rescan_notice(report: RescanReport) -> str:
    """The rescan totals in one line, ending with the folders nobody chose."""
    totals = report.totals
    text = (f"Rescan: {totals.scanned} scanned, {totals.enqueued} enqueued, "
            f"{totals.already_active} already active, {totals.already_processed} already "
            f"processed, {totals.ignored} ignored, {totals.errors} error(s).")
    if totals.unassigned:
        text += f" … {totals.unassigned} folder(s) without a profile, skipped."
    return text


@router.get("/folders", response_class=HTMLResponse, include_in_schema=False)
async def folders_page(request: Request, signer: SignerFace) -> HTMLResponse:
    """Running; Stopped, Unavailable or NoSignal (red, with the last error); no profile or
    starting (grey)."""
    return render(request, "folders.html", folders=(await signer.folders.overview()).folders)


@router.post("/folders/rescan", include_in_schema=False)
async def rescan(request: Request, signer: SignerFace, form: CheckedForm) -> RedirectResponse:
    """Rescan one folder or all of them; the totals come back as a notice."""
    folder = str(form.get("folder") or "") or None
    try:
        report = await signer.intake.rescan(folder)
    except EsteiraError as exc:
        return redirect(request, "/folders", error=exc)
    return redirect(request, "/folders", notice=rescan_notice(report))
