"""What the pickup routes share besides the face: the actor, a key's school, guardian auth."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Query, Request

from services.app_context import PickupFace
from shared.paging import MAX_PAGE


def _actor(request: Request) -> str:
    return getattr(request.state, "actor", "api-key")


Actor = Annotated[str, Depends(_actor)]


async def _guardian(pickup: PickupFace,
                    authorization: Annotated[str | None, Header()] = None) -> int:
    return await pickup.access.guardian_for_header(authorization)


GuardianId = Annotated[int, Depends(_guardian)]


def _scope(request: Request) -> int | None:
    # Set by the API key middleware for a school-scoped key; None for the global key.
    return getattr(request.state, "school_id", None)


SchoolScope = Annotated[int | None, Depends(_scope)]
# A page: at most `limit` items after `cursor` (the previous page's `nextCursor`).
Limit = Annotated[int, Query(ge=1, le=MAX_PAGE)]
Cursor = Annotated[str | None, Query(max_length=200)]


async def school_guard(request: Request, pickup: PickupFace, scope: SchoolScope) -> None:
    """404 for a record of another school named in the path (school-scoped keys only)."""
    await pickup.scope.check_path(scope, request.path_params)
