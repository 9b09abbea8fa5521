"""Pickup administration: a school's students, guardians and their links, with the cards and
QR codes they hold; each page lists a page of records and the forms that add to them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from activities.pickup.contracts.board import Kind
from activities.pickup.operator import PickupOperations, RecordFilter
from services.app_context import PickupFace
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.routes import pickup_forms as forms
from services.dashboard.routes.pickup_admin import admin_url
from services.dashboard.web import next_page_url, redirect, render
from shared.errors import EsteiraError

router = APIRouter()


async def list_page(request: Request, pickup: PickupOperations, school_id: int,
                    topic: str, template: str, **values: object) -> HTMLResponse:
    """A page of the school's records of one kind, with the link to the next page."""
    try:
        school = await pickup.schools.get(school_id)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    listing = getattr(pickup.listing, topic)
    page = await listing(RecordFilter(school_id=school_id), limit=forms.PAGE_SIZE,
                         cursor=forms.cursor_of(request))
    path = admin_url(school_id, topic)
    return render(request, template, school=school, page=page, kinds=[k.value for k in Kind],
                  next_url=next_page_url(request, path, page.next_cursor), **values)


async def act(request: Request, back: str, done: Callable[[], Awaitable[str]]) -> Response:
    """Run one action; back to the page with what it did, or with why it was refused."""
    try:
        notice = await done()
    except EsteiraError as exc:
        return redirect(request, back, error=exc)
    return redirect(request, back, notice=notice)


@router.get("/pickup/{school_id}/admin/students", response_class=HTMLResponse,
            include_in_schema=False)
async def students_page(request: Request, school_id: int, pickup: PickupFace) -> HTMLResponse:
    """The school's students, a page at a time; add one, set one's card or QR code."""
    return await list_page(request, pickup, school_id, "students", "pickup_students.html")


@router.post("/pickup/{school_id}/admin/students", include_in_schema=False)
async def create_student(request: Request, school_id: int, form: CheckedForm,
                         pickup: PickupFace) -> Response:
    """A student, AT_SCHOOL, with its own card / QR code if given."""
    async def done() -> str:
        student = await pickup.records.create_student(
            school_id=school_id, name=str(forms.text(form, "name", "Name", required=True)),
            registration=forms.text(form, "registration", "Registration", limit=64),
            card_value=forms.number(form, "card_value", "Card number"),
            qr_value=forms.text(form, "qr_value", "QR code"), actor=actor(request))
        return f"Student {student.name} added (id {student.id})."
    return await act(request, admin_url(school_id, "students"), done)


@router.post("/pickup/{school_id}/admin/students/credential", include_in_schema=False)
async def student_credential(request: Request, school_id: int, form: CheckedForm,
                             pickup: PickupFace) -> Response:
    """A student's own card / QR code (what its READY exit grant carries)."""
    async def done() -> str:
        student_id = forms.ident(form, "student_id", "Student id")
        await pickup.scope.check_student(school_id, student_id)  # 404 unless this school's
        card, qr = forms.credential(form)
        await pickup.credentials.set_student_credential(
            student_id=student_id, card_value=card, qr_value=qr,
            actor=actor(request))
        return f"Credential of student {student_id} set."
    return await act(request, admin_url(school_id, "students"), done)


@router.get("/pickup/{school_id}/admin/guardians", response_class=HTMLResponse,
            include_in_schema=False)
async def guardians_page(request: Request, school_id: int, pickup: PickupFace) -> HTMLResponse:
    """Guardians the school registered or linked; add one, set one's card or QR code."""
    return await list_page(request, pickup, school_id, "guardians", "pickup_guardians.html")


@router.post("/pickup/{school_id}/admin/guardians", include_in_schema=False)
async def create_guardian(request: Request, school_id: int, form: CheckedForm,
                          pickup: PickupFace) -> Response:
    """A guardian of this school (CPF checked), with their card / QR code here if given."""
    async def done() -> str:
        await pickup.schools.get(school_id)
        guardian = await pickup.records.create_guardian(
            name=str(forms.text(form, "name", "Name", required=True)),
            contact=forms.text(form, "contact", "Contact"), school_id=school_id,
            cpf=forms.text(form, "cpf", "CPF", limit=20),
            card_value=forms.number(form, "card_value", "Card number"),
            qr_value=forms.text(form, "qr_value", "QR code"), actor=actor(request))
        return f"Guardian {guardian.name} added (id {guardian.id})."
    return await act(request, admin_url(school_id, "guardians"), done)


@router.post("/pickup/{school_id}/admin/guardians/credential", include_in_schema=False)
async def guardian_credential(request: Request, school_id: int, form: CheckedForm,
                              pickup: PickupFace) -> Response:
    """A guardian's card / QR code at this school (granted there while a link lasts)."""
    async def done() -> str:
        guardian_id = forms.ident(form, "guardian_id", "Guardian id")
        await pickup.scope.check_guardian(school_id, guardian_id)
        card, qr = forms.credential(form)
        await pickup.credentials.set_guardian_credential(
            guardian_id=guardian_id, school_id=school_id, card_value=card, qr_value=qr,
            actor=actor(request))
        return f"Credential of guardian {guardian_id} set."
    return await act(request, admin_url(school_id, "guardians"), done)


@router.get("/pickup/{school_id}/admin/links", response_class=HTMLResponse,
            include_in_schema=False)
async def links_page(request: Request, school_id: int, pickup: PickupFace) -> HTMLResponse:
    """Links between the school's students and their guardians, with their validity."""
    return await list_page(request, pickup, school_id, "links", "pickup_links.html")


@router.post("/pickup/{school_id}/admin/links", include_in_schema=False)
async def create_link(request: Request, school_id: int, form: CheckedForm,
                      pickup: PickupFace) -> Response:
    """Link a guardian to a student: permanent, or temporary with its validity period (read
    in the school's time zone)."""
    async def done() -> str:
        school = await pickup.schools.get(school_id)
        student_id = forms.ident(form, "student_id", "Student id")
        guardian_id = forms.ident(form, "guardian_id", "Guardian id")
        await pickup.scope.check_student(school_id, student_id)
        link = await pickup.access.link_guardian(
            student_id=student_id, guardian_id=guardian_id, kind=forms.kind(form),
            valid_from=forms.moment(form, "valid_from", "Valid from", school.time_zone),
            valid_until=forms.moment(form, "valid_until", "Valid until", school.time_zone),
            actor=actor(request))
        return f"Guardian {guardian_id} linked to student {student_id} ({link.kind})."
    return await act(request, admin_url(school_id, "links"), done)


@router.post("/pickup/{school_id}/admin/links/{link_id}/delete", include_in_schema=False)
async def delete_link(request: Request, school_id: int, link_id: int, _form: CheckedForm,
                      pickup: PickupFace) -> Response:
    """Unlink (the guardian's app drops the student; the last link revokes the badge)."""
    async def done() -> str:
        await pickup.scope.check_path(school_id, {"link_id": str(link_id)})
        await pickup.records.delete_link(link_id=link_id, actor=actor(request))
        return f"Link {link_id} removed."
    return await act(request, admin_url(school_id, "links"), done)
