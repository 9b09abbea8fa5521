"""Who acts on the operator surfaces (REST, dashboard, gRPC): named by the credential, never
by the body; a named operator from an HTTP Basic credential, checked against the dashboard's
accounts."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated

from fastapi import Depends, Request

from activities.sisbajud.contracts.errors import SisbajudApiErrorCode, sisbajud_error
from services.app_context import ContextDep
from services.dashboard.accounts import OperatorDirectory
from shared.settings import Settings

API_KEY_ACTOR = "api-key"


def _basic(header: str) -> tuple[str, str] | None:
    scheme, _, encoded = header.partition(" ")
    if scheme.lower() != "basic" or not encoded:
        return None
    try:
        name, sep, password = base64.b64decode(encoded, validate=True).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return (name, password) if sep else None


def basic_operator(header: str, settings: Settings, api_key: str) -> str:
    """`operator:<name>` when `Basic name:password` matches a dashboard account (the same
    people and scrypt hashes as the dashboard's sign-in), else 401 `sisbajud.operator-invalid`."""
    pair = _basic(header)
    name = (OperatorDirectory.from_settings(settings, api_key).authenticate(*pair)
            if pair else None)
    if name is None:
        raise sisbajud_error(SisbajudApiErrorCode.OPERATOR_INVALID,
                             "The operator credential (Authorization: Basic) is not valid.")
    return f"operator:{name}"


def credential_actor(request: Request, context: ContextDep) -> str:
    """`operator:<name>` for a dashboard account (its session, or HTTP Basic with its password
    next to the API key), else the credential that let the call in (`api-key`)."""
    header = request.headers.get("Authorization")
    if header is None:
        return getattr(request.state, "actor", None) or API_KEY_ACTOR
    return basic_operator(header, context.settings, context.api_key)


# Who acts, from the credential, in a route of either door (REST, dashboard): `actor: ActorDep`.
ActorDep = Annotated[str, Depends(credential_actor)]
