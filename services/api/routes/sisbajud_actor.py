"""Who is acting on the SISBAJUD operator surface: named by the credential, never the body."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from services.app_context import ContextDep
from services.operator_credentials import API_KEY_ACTOR, basic_operator


def credential_actor(request: Request, context: ContextDep) -> str:
    """`operator:<name>` for a dashboard account (its session, or HTTP Basic with its password
    next to the API key), else the credential that let the call in (`api-key`)."""
    header = request.headers.get("Authorization")
    if header is None:
        return getattr(request.state, "actor", None) or API_KEY_ACTOR
    return basic_operator(header, context.settings, context.api_key)


# Who acts, from the credential: `actor: ActorDep`.
ActorDep = Annotated[str, Depends(credential_actor)]
