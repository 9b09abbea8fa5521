"""Pickup administration: authorized persons (with their card / QR code) and early releases,
and their decisions, each sent with the version the page showed."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from services.app_context import PickupFace
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.routes import pickup_forms as forms
from services.dashboard.routes.pickup_admin import admin_url
from services.dashboard.routes.pickup_records import act, list_page
from shared.errors import ErrorCode, EsteiraError

router = APIRouter()
# The decisions each record takes, with the button's label (the board's language).
PERSON_DECISIONS = {"approve": "Aprovar", "request-adjustments": "Pedir ajustes",
                    "revoke": "Revogar"}
RELEASE_DECISIONS = {"approve": "Aprovar", "request-adjustments": "Pedir ajustes",
                     "use": "Usar"}
# What the page says once a decision went through.
DECIDED = {"approve": "approved", "request-adjustments": "sent back for adjustments",
           "revoke": "revoked", "use": "used"}


def _decision(decision: str, known: dict[str, str]) -> str:
    if decision not in known:
        raise EsteiraError(ErrorCode.NOT_FOUND, f"No decision {decision!r}.")
    return decision


@router.get("/pickup/{school_id}/admin/persons", response_class=HTMLResponse,
            include_in_schema=False)
async def persons_page(request: Request, school_id: int, pickup: PickupFace) -> HTMLResponse:
    """People authorized to pick up the school's students, with their decisions."""
    return await list_page(request, pickup, school_id, "persons", "pickup_persons.html",
                           decisions=PERSON_DECISIONS)


@router.post("/pickup/{school_id}/admin/persons", include_in_schema=False)
async def create_person(request: Request, school_id: int, form: CheckedForm,
                        pickup: PickupFace) -> Response:
    """Someone authorized to pick up a student (pending until approved); a temporary one has
    its validity period (read in the school's time zone) and expires at its end."""
    async def done() -> str:
        school = await pickup.schools.get(school_id)
        student_id = forms.ident(form, "student_id", "Student id")
        await pickup.scope.check_student(school_id, student_id)
        person = await pickup.authorizations.create_person(
            student_id=student_id, name=str(forms.text(form, "name", "Name", required=True)),
            document=forms.text(form, "document", "Document", limit=64),
            kind=forms.kind(form),
            valid_from=forms.moment(form, "valid_from", "Valid from", school.time_zone),
            valid_until=forms.moment(form, "valid_until", "Valid until", school.time_zone),
            card_value=forms.number(form, "card_value", "Card number"),
            qr_value=forms.text(form, "qr_value", "QR code"), actor=actor(request))
        return f"Authorized person {person.name} added (id {person.id}), pending approval."
    return await act(request, admin_url(school_id, "persons"), done)


@router.post("/pickup/{school_id}/admin/persons/credential", include_in_schema=False)
async def person_credential(request: Request, school_id: int, form: CheckedForm,
                            pickup: PickupFace) -> Response:
    """A person's card / QR code (swapped on the turnstile if already approved)."""
    async def done() -> str:
        person_id = forms.ident(form, "person_id", "Person id")
        await pickup.scope.check_path(school_id, {"person_id": str(person_id)})
        card, qr = forms.credential(form)
        await pickup.credentials.set_person_credential(
            person_id=person_id, card_value=card, qr_value=qr, actor=actor(request))
        return f"Credential of authorized person {person_id} set."
    return await act(request, admin_url(school_id, "persons"), done)


@router.post("/pickup/{school_id}/admin/persons/{person_id}/{decision}",
             include_in_schema=False)
async def decide_person(request: Request, school_id: int, person_id: int, decision: str,
                        form: CheckedForm, pickup: PickupFace) -> Response:
    """approve (granted on the turnstile) / request adjustments / revoke."""
    async def done() -> str:
        chosen = _decision(decision, PERSON_DECISIONS)
        await pickup.scope.check_path(school_id, {"person_id": str(person_id)})
        person = await pickup.authorizations.decide_person(
            person_id=person_id, decision=chosen, version=forms.version(form),
            actor=actor(request))
        return f"{person.name}: {DECIDED[chosen]}."
    return await act(request, admin_url(school_id, "persons"), done)


@router.get("/pickup/{school_id}/admin/releases", response_class=HTMLResponse,
            include_in_schema=False)
async def releases_page(request: Request, school_id: int, pickup: PickupFace) -> HTMLResponse:
    """Early releases of the school's students, with their decisions."""
    return await list_page(request, pickup, school_id, "releases", "pickup_releases.html",
                           decisions=RELEASE_DECISIONS)


@router.post("/pickup/{school_id}/admin/releases", include_in_schema=False)
async def create_release(request: Request, school_id: int, form: CheckedForm,
                         pickup: PickupFace) -> Response:
    """A dated, single-use early release (pending); unused, it expires at its date."""
    async def done() -> str:
        school = await pickup.schools.get(school_id)
        student_id = forms.ident(form, "student_id", "Student id")
        await pickup.scope.check_student(school_id, student_id)
        until = forms.moment(form, "valid_until", "Valid until", school.time_zone)
        if until is None:
            raise forms.invalid("Valid until is required.")
        release = await pickup.authorizations.create_release(
            student_id=student_id, valid_until=until,
            reason=forms.text(form, "reason", "Reason", limit=500), actor=actor(request))
        return f"Early release {release.id} for student {student_id} added, pending approval."
    return await act(request, admin_url(school_id, "releases"), done)


@router.post("/pickup/{school_id}/admin/releases/{release_id}/{decision}",
             include_in_schema=False)
async def decide_release(request: Request, school_id: int, release_id: int, decision: str,
                         form: CheckedForm, pickup: PickupFace) -> Response:
    """approve (the guardians are told) / request adjustments / use (once, before its date)."""
    async def done() -> str:
        chosen = _decision(decision, RELEASE_DECISIONS)
        await pickup.scope.check_path(school_id, {"release_id": str(release_id)})
        await pickup.authorizations.decide_release(
            release_id=release_id, decision=chosen, version=forms.version(form),
            actor=actor(request))
        return f"Early release {release_id}: {DECIDED[chosen]}."
    return await act(request, admin_url(school_id, "releases"), done)
