"""Profiles: list with badges, detail, "Edit behaviour" with the folder picker, create."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from activities.signer.operator import ProfileView
from services.app_context import SignerFace
from services.dashboard.guard import CheckedForm, actor
from services.dashboard.web import redirect, render
from shared.errors import EsteiraError

router = APIRouter()
FORMATS = ["auto", "pades", "cades", "xades"]
FLAGS = ("enabled", "verify", "validate_certificate", "encrypt")
POLICY_FIELDS = ("policy_name", "policy_document", "policy_digest")


async def _badges(signer: SignerFace, views: list[ProfileView]
                  ) -> dict[str, list[tuple[str, str]]]:
    """DEGRADED (certificate or stored folder broken) and KEYLESS, per profile."""
    badges: dict[str, list[tuple[str, str]]] = {}
    for view in views:
        row = view.row
        marks = badges.setdefault(row.name, [])
        if view.keyless:
            marks.append(("KEYLESS", "approvers sign; no key is opened"))
        elif row.enabled:
            # What a worker found: this process never opens a key or loads a module.
            ok, detail = await signer.profiles.recorded_health(row)
            if not ok:
                marks.append(("DEGRADED", detail))
        if (stale := signer.folders.unconfigured(row)) is not None:
            marks.append(("DEGRADED", stale))
    return badges


def _folder_choices(signer: SignerFace, views: list[ProfileView], own: str | None) -> list[str]:
    """None, every configured folder no other profile uses, and the profile's own."""
    return signer.folders.choices([view.row for view in views], own)


@router.get("/profiles", response_class=HTMLResponse, include_in_schema=False)
async def profiles_page(request: Request, signer: SignerFace) -> HTMLResponse:
    """Every profile with its folder and badges."""
    views = await signer.profiles.all()
    return render(request, "profiles.html", profiles=[view.row for view in views],
                  badges=await _badges(signer, views))


@router.get("/profiles/_new", response_class=HTMLResponse, include_in_schema=False)
async def new_profile_page(request: Request, signer: SignerFace) -> HTMLResponse:
    """The create form, with the folder picker."""
    return render(request, "profile_new.html", formats=FORMATS,
                  policies=signer.profiles.policy_names,
                  folders=_folder_choices(signer, await signer.profiles.all(), None))


@router.post("/profiles/_new", include_in_schema=False)
async def create(request: Request, signer: SignerFace, form: CheckedForm) -> RedirectResponse:
    """Create a profile; refusals come back as a notice with their code."""
    texts = {key: str(form.get(key) or "").strip() or None
             for key in ("name", "format", "cert_source", "pfx_path", "pfx_password_env",
                         "input_folder", *POLICY_FIELDS)}
    data: dict[str, object] = {k: v for k, v in texts.items() if v is not None}
    data.update({flag: form.get(flag) == "on" for flag in FLAGS})
    try:
        created = await signer.profiles.create(data, actor=actor(request))
    except EsteiraError as exc:
        return redirect(request, "/profiles/_new", error=exc)
    name = created.row.name
    return redirect(request, f"/profiles/{name}", notice=f"Profile {name} created.")


@router.get("/profiles/{name}", response_class=HTMLResponse, include_in_schema=False)
async def profile_page(request: Request, signer: SignerFace, name: str) -> HTMLResponse:
    """One profile and its "Edit behaviour" form."""
    try:
        view = await signer.profiles.get(name)
    except EsteiraError as exc:
        return render(request, "not_found.html", status_code=exc.status, error=exc)
    views = await signer.profiles.all()
    return render(request, "profile.html", profile=view.row,
                  effective_policy=view.effective_policy,
                  effective_level=view.effective_level, formats=FORMATS,
                  policies=signer.profiles.policy_names,
                  badges=(await _badges(signer, [view])).get(name, []),
                  folders=_folder_choices(signer, views, view.row.input_folder))


@router.post("/profiles/{name}", include_in_schema=False)
async def edit(request: Request, signer: SignerFace, name: str,
               form: CheckedForm) -> RedirectResponse:
    """Edit behaviour (folder refusals name the owner)."""
    changes: dict[str, object] = {flag: form.get(flag) == "on" for flag in FLAGS}
    changes["input_folder"] = str(form.get("input_folder") or "") or None
    changes.update({key: str(form.get(key) or "").strip() or None for key in POLICY_FIELDS})
    if form.get("format") in FORMATS:
        changes["format"] = form.get("format")
    try:
        await signer.profiles.edit(name, changes, actor=actor(request))
    except EsteiraError as exc:
        return redirect(request, f"/profiles/{name}", error=exc)
    return redirect(request, f"/profiles/{name}", notice=f"Profile {name} saved.")
