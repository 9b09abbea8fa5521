"""Pickup administration: a new school, a school's settings and its controller's Monitor, and
its roster from CSV (a dry-run preview first, then "Aplicar")."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import UploadFile

from activities.pickup.operator import PickupOperations, RosterReport
from services.app_context import PickupFace
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.routes.pickup_forms import invalid, school_fields, text
from services.dashboard.web import redirect, render
from shared.errors import EsteiraError

router = APIRouter()
# The REST import's limit, for the same reason: a roster is a file a school exports.
MAX_ROSTER_BYTES = 5 * 1024 * 1024


def admin_url(school_id: int, page: str = "") -> str:
    """A page of the school's administration."""
    return f"/pickup/{school_id}/admin" + (f"/{page}" if page else "")


@router.post("/pickup/schools", include_in_schema=False)
async def create_school(request: Request, form: CheckedForm,
                        pickup: PickupFace) -> RedirectResponse:
    """A new school (what is left blank takes the settings' defaults); its page follows."""
    try:
        fields = school_fields(form)
        if "name" not in fields:
            raise invalid("Name is required.")
        school = await pickup.schools.create(**fields, actor=actor(request))
    except EsteiraError as exc:
        return redirect(request, "/pickup", error=exc)
    return redirect(request, admin_url(school.id), notice=f"School {school.name} created.")


@router.get("/pickup/{school_id}/admin", response_class=HTMLResponse, include_in_schema=False)
async def school_page(request: Request, school_id: int, pickup: PickupFace) -> HTMLResponse:
    """A school's settings, its Monitor, and the links to its records."""
    try:
        school = await pickup.schools.get(school_id)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    return render(request, "pickup_school.html", school=school,
                  public_base_url=str(request.base_url).rstrip("/"))


@router.post("/pickup/{school_id}/admin/settings", include_in_schema=False)
async def save_settings(request: Request, school_id: int, form: CheckedForm,
                        pickup: PickupFace) -> RedirectResponse:
    """Name, time zone, day start, arrival timeout, turnstile URL (blank keeps the value)."""
    try:
        await pickup.schools.update(school_id, changes=school_fields(form),
                                    actor=actor(request))
    except EsteiraError as exc:
        return redirect(request, admin_url(school_id), error=exc)
    return redirect(request, admin_url(school_id), notice="Settings saved.")


@router.post("/pickup/{school_id}/admin/monitor", include_in_schema=False)
async def configure_monitor(request: Request, school_id: int, form: CheckedForm,
                            pickup: PickupFace) -> RedirectResponse:
    """A new Monitor token, handed to the school's controller with our address."""
    try:
        base = text(form, "public_base_url", "Public address", required=True, limit=500)
        target = await pickup.monitor.configure(school_id=school_id,
                                                public_base_url=str(base),
                                                actor=actor(request))
    except EsteiraError as exc:
        return redirect(request, admin_url(school_id), error=exc)
    return redirect(request, admin_url(school_id), notice=(
        f"The controller now pushes to {target.scheme}://{target.host}:{target.port}/… with "
        "a new token; the previous token stopped working."))


@router.get("/pickup/{school_id}/admin/roster", response_class=HTMLResponse,
            include_in_schema=False)
async def roster_page(request: Request, school_id: int, pickup: PickupFace) -> HTMLResponse:
    """The roster upload form."""
    try:
        school = await pickup.schools.get(school_id)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    return render(request, "pickup_roster.html", school=school, report=None, csv_text=None)


@router.post("/pickup/{school_id}/admin/roster/preview", response_class=HTMLResponse,
             include_in_schema=False)
async def roster_preview(request: Request, school_id: int, form: CheckedForm,
                         pickup: PickupFace) -> Response:
    """What the file would change, line by line, written nowhere; "Aplicar" sends it again."""
    try:
        upload = form.get("roster")
        if not isinstance(upload, UploadFile) or not upload.filename:
            raise invalid("Choose a roster file (CSV).")
        raw = await upload.read(MAX_ROSTER_BYTES + 1)
        if len(raw) > MAX_ROSTER_BYTES:
            raise invalid(f"A roster file is at most {MAX_ROSTER_BYTES} bytes.")
        csv_text = _decoded(raw)
        return await _roster(request, pickup, school_id, csv_text, dry_run=True)
    except EsteiraError as exc:
        return redirect(request, admin_url(school_id, "roster"), error=exc)


@router.post("/pickup/{school_id}/admin/roster/apply", response_class=HTMLResponse,
             include_in_schema=False)
async def roster_apply(request: Request, school_id: int, form: CheckedForm,
                       pickup: PickupFace) -> Response:
    """The previewed file, written (checked whole again: a line refused now writes nothing)."""
    csv_text = str(form.get("csv_text") or "")
    try:
        if not csv_text.strip():
            raise invalid("The roster to apply is missing; upload it again.")
        if len(csv_text.encode()) > MAX_ROSTER_BYTES:
            raise invalid(f"A roster file is at most {MAX_ROSTER_BYTES} bytes.")
        return await _roster(request, pickup, school_id, csv_text, dry_run=False)
    except EsteiraError as exc:
        return redirect(request, admin_url(school_id, "roster"), error=exc)


async def _roster(request: Request, pickup: PickupOperations, school_id: int, csv_text: str,
                  *, dry_run: bool) -> HTMLResponse:
    school = await pickup.schools.get(school_id)
    report = await pickup.roster.import_roster(school_id=school_id, text=csv_text,
                                               dry_run=dry_run, actor=actor(request))
    return render(request, "pickup_roster.html", school=school, report=report,
                  csv_text=csv_text, verdict=_verdict(report),
                  status_code=422 if report.refused else 200)


def _verdict(report: RosterReport) -> str:
    """What the report means for the operator, in one sentence."""
    if report.refused:
        kept = ("the batches before the refused line were written; fix it and apply the file "
                "again to finish" if report.written else "nothing was written")
        return f"{report.refused} line(s) refused; {kept}."
    if report.dry_run:
        return "Preview only: nothing was written. Apply to make these changes."
    return "Roster applied."


def _decoded(raw: bytes) -> str:
    # Spreadsheets in Brazil save UTF-8 (often with a BOM) or Windows-1252.
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")
