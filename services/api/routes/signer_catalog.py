"""The signer's folders, profiles and events trail: cursor-paged lists, profile edits."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from activities.signer.operator import EventFilter
from services.api.routes.signer import ActorDep
from services.api.routes.signer_schemas import Event, Folder, Profile
from services.app_context import SignerFace
from shared.paging import MAX_PAGE
from shared.wire import PageOut

router = APIRouter(prefix="/api", tags=["signer"])
DEFAULT_PAGE = 100
Limit = Annotated[int, Query(ge=1, le=MAX_PAGE)]


@router.get("/folders", response_model=PageOut[Folder])
async def list_folders(signer: SignerFace, limit: Limit = DEFAULT_PAGE,
                       cursor: str | None = None) -> PageOut[Folder]:
    """Each configured input folder by name: Running, Starting, Unavailable or Stopped (with
    its last error), NoSignal (no live watcher) or Unassigned; `instance` says which instance
    answered (every one watches every folder)."""
    page = await signer.folders.page(limit=limit, cursor=cursor)
    me = signer.folders.instance
    return PageOut[Folder](items=[Folder.of(f, me) for f in page.items],
                           next_cursor=page.next_cursor)


@router.get("/profiles", response_model=PageOut[Profile])
async def list_profiles(signer: SignerFace, limit: Limit = DEFAULT_PAGE,
                        cursor: str | None = None) -> PageOut[Profile]:
    """Every signing profile by name (never a secret, only where it comes from)."""
    page = await signer.profiles.page(limit=limit, cursor=cursor)
    return PageOut[Profile](items=[Profile.of(v) for v in page.items],
                            next_cursor=page.next_cursor)


@router.get("/profiles/{name}", response_model=Profile)
async def get_profile(signer: SignerFace, name: str) -> Profile:
    """One signing profile (KEYLESS shows `keyless: true`, `certSource: none`)."""
    return Profile.of(await signer.profiles.get(name))


@router.post("/profiles", status_code=201, response_model=Profile)
async def create_profile(signer: SignerFace, actor: ActorDep, body: dict[str, Any]) -> Profile:
    """A new profile (the `Signing:Profiles[]` fields, checked by the signer: refusals carry
    profile.invalid); a folder must be configured on this host and not used by another."""
    return Profile.of(await signer.profiles.create(body, actor=actor))


@router.patch("/profiles/{name}", response_model=Profile)
async def edit_profile(signer: SignerFace, actor: ActorDep, name: str,
                       body: dict[str, Any]) -> Profile:
    """Edit behaviour (folder, enabled, checks, encryption, format); refusals name the owner."""
    return Profile.of(await signer.profiles.edit(name, body, actor=actor))


@router.get("/events", response_model=PageOut[Event])
async def list_events(
    signer: SignerFace, type: Annotated[list[str] | None, Query()] = None,
    created_from: Annotated[datetime | None, Query(alias="from")] = None,
    created_to: Annotated[datetime | None, Query(alias="to")] = None,
    text: str | None = None, limit: Limit = DEFAULT_PAGE, cursor: str | None = None,
) -> PageOut[Event]:
    """The operational events trail, newest first, with a cursor to the next page."""
    filters = EventFilter(types=type or [], created_from=created_from,
                          created_to=created_to, text=text)
    page = await signer.events.page(filters, limit=limit, cursor=cursor)
    return PageOut[Event](items=[Event.of(row) for row in page.items],
                          next_cursor=page.next_cursor)
