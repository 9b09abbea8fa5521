"""Profiles: list with badges, detail, "Edit behaviour" with the folder picker, create."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from activities.signer.operator.errors import refuse
from activities.signer.operator.folders import unconfigured_folder
from activities.signer.operator.health import is_keyless, recorded_health
from activities.signer.operator.policies import POLICY_NAMES
from activities.signer.operator.profiles_admin import list_profiles
from services.api.routes import signer as rest
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.web import context, redirect, render
from shared.contracts.signer import SignerErrorCode
from shared.errors import EsteiraError

router = APIRouter()
FORMATS = ["auto", "pades", "cades", "xades"]
FLAGS = ("enabled", "verify", "validate_certificate", "encrypt")
POLICY_FIELDS = ("policy_name", "policy_document", "policy_digest")


async def _badges(request: Request) -> dict[str, list[tuple[str, str]]]:
    """DEGRADED (certificate or stored folder broken) and KEYLESS, per profile."""
    ctx = context(request)
    rows = await list_profiles(ctx.sessions)
    badges: dict[str, list[tuple[str, str]]] = {}
    for row in rows:
        marks = badges.setdefault(row.name, [])
        if is_keyless(row):
            marks.append(("KEYLESS", "approvers sign; no key is opened"))
        elif row.enabled:
            # What a worker found: this process never opens a key or loads a module.
            ok, detail = await recorded_health(row, ctx.sessions)
            if not ok:
                marks.append(("DEGRADED", detail))
        if (stale := unconfigured_folder(row, ctx.settings)) is not None:
            marks.append(("DEGRADED", stale))
    return badges


async def _folder_choices(request: Request, own: str | None) -> list[str]:
    """None, every configured folder no other profile uses, and the profile's own."""
    taken = {p["inputFolder"].lower() for p in await rest.list_profiles(context(request))
             if p["inputFolder"] and p["inputFolder"] != own}
    return [f.name for f in context(request).settings.effective_inputs
            if f.name.lower() not in taken]


@router.get("/profiles", response_class=HTMLResponse, include_in_schema=False)
async def profiles_page(request: Request) -> HTMLResponse:
    """Every profile with its folder and badges."""
    return render(request, "profiles.html", profiles=await rest.list_profiles(context(request)),
                  badges=await _badges(request))


@router.get("/profiles/_new", response_class=HTMLResponse, include_in_schema=False)
async def new_profile_page(request: Request) -> HTMLResponse:
    """The create form, with the folder picker."""
    return render(request, "profile_new.html", formats=FORMATS, policies=POLICY_NAMES,
                  folders=await _folder_choices(request, None))


@router.post("/profiles/_new", include_in_schema=False)
async def create(request: Request, form: CheckedForm) -> RedirectResponse:
    """Create through the REST handler; refusals come back as a notice with their code."""
    data = {key: str(form.get(key) or "").strip() or None
            for key in ("name", "format", "cert_source", "pfx_path", "pfx_password_env",
                        "input_folder", *POLICY_FIELDS)}
    data = {k: v for k, v in data.items() if v is not None}
    data.update({flag: form.get(flag) == "on" for flag in FLAGS})
    try:
        created = await rest.create_profile(context(request), actor(request), data)
    except EsteiraError as exc:
        return redirect(request, "/profiles/_new", error=exc)
    return redirect(request, f"/profiles/{created['name']}",
                    notice=f"Profile {created['name']} created.")


@router.get("/profiles/{name}", response_class=HTMLResponse, include_in_schema=False)
async def profile_page(request: Request, name: str) -> HTMLResponse:
    """One profile and its "Edit behaviour" form."""
    profiles = await rest.list_profiles(context(request))
    profile = next((p for p in profiles if p["name"] == name), None)
    if profile is None:
        error = refuse(SignerErrorCode.PROFILE_NOT_FOUND, f"No signing profile named {name}.")
        return render(request, "not_found.html", status_code=error.status, error=error)
    return render(request, "profile.html", profile=profile, formats=FORMATS,
                  policies=POLICY_NAMES,
                  badges=(await _badges(request)).get(name, []),
                  folders=await _folder_choices(request, profile["inputFolder"]))


@router.post("/profiles/{name}", include_in_schema=False)
async def edit(request: Request, name: str, form: CheckedForm) -> RedirectResponse:
    """Edit behaviour through the REST handler (folder refusals name the owner)."""
    changes = {flag: form.get(flag) == "on" for flag in FLAGS}
    changes["input_folder"] = str(form.get("input_folder") or "") or None
    changes.update({key: str(form.get(key) or "").strip() or None for key in POLICY_FIELDS})
    if form.get("format") in FORMATS:
        changes["format"] = form.get("format")
    try:
        await rest.edit_profile(context(request), actor(request), name, changes)
    except EsteiraError as exc:
        return redirect(request, f"/profiles/{name}", error=exc)
    return redirect(request, f"/profiles/{name}", notice=f"Profile {name} saved.")
