"""API key enforcement for every route that isn't public."""

from __future__ import annotations

import re
from collections.abc import Mapping

from fastapi import Request
from pydantic import SecretStr
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.responses import Response

from activities.pickup.contracts.board import PickupErrorCode
from activities.pickup.contracts.errors import pickup_error
from shared.auth import API_KEY_HEADER, keys_match, school_for_key
from shared.errors import ErrorCode, EsteiraError
from shared.problem import refusal

# Probes and scrapes must work without credentials; the OpenAPI description is published.
PUBLIC_PATHS = frozenset(
    {"/api/health", "/api/ready", "/api/metrics", "/api/openapi.json", "/api/docs"}
)
# Routes that authenticate themselves: the guardian app with its bearer access tokens, the
# turnstile controllers' Monitor pushes with the monitor token in their path.
# The Lacuna Signer's webhook carries its token in the path the same way.
SELF_AUTHENTICATED_PREFIXES = ("/api/pickup/guardian/", "/api/pickup/turnstile/monitor/",
                               "/api/signer/lacuna/webhook/",
                               # Approvers decide with their own per-job bearer token.
                               "/api/approvals/",
                               # The Temporal UI's codec calls: API key or dashboard session.
                               "/api/temporal-codec/")
# Reads an operator's dashboard session may make too (GET only: a cookie rides along on its
# own, so nothing that changes state accepts it here): the readiness detail and a job's files.
SESSION_READABLE = re.compile(r"/api/ready/details|/api/jobs/[^/]+/files(/.*)?")
SESSION_METHODS = frozenset({"GET", "HEAD"})
# Where a school-scoped key may go: the pickup records of its own school.
SCHOOL_SCOPED_PREFIX = "/api/pickup/"


class ApiKeyMiddleware(BaseHTTPMiddleware):
    """Rejects `/api/*` requests without the right `X-API-Key` (401, JSON body)."""

    def __init__(self, app, api_key: str, school_keys: Mapping[int, SecretStr] | None = None
                 ) -> None:
        super().__init__(app)
        self._api_key = api_key
        self._school_keys = dict(school_keys or {})

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        path = request.url.path.rstrip("/") or "/"
        if not path.startswith("/api") or path in PUBLIC_PATHS \
                or path.startswith(SELF_AUTHENTICATED_PREFIXES):
            return await call_next(request)
        presented = request.headers.get(API_KEY_HEADER)
        if presented is None and (operator := await _operator_reading(request, path)):
            request.state.actor = f"operator:{operator}"
            return await call_next(request)
        if presented is None:
            error = EsteiraError(ErrorCode.AUTH_MISSING_KEY,
                                 f"The {API_KEY_HEADER} header is required.")
        elif keys_match(presented, self._api_key):
            request.state.actor = "api-key"
            return await call_next(request)
        elif (school := school_for_key(presented, self._school_keys)) is None:
            error = EsteiraError(ErrorCode.AUTH_INVALID_KEY, "The API key is not valid.")
        elif not path.startswith(SCHOOL_SCOPED_PREFIX):
            error = pickup_error(PickupErrorCode.SCHOOL_SCOPE,
                                 "A school-scoped API key reaches only its school's pickup "
                                 "records.")
        else:
            # Routes read the scope (`SchoolScope`) and answer 404 for other schools' records.
            request.state.actor = f"school-key:{school}"
            request.state.school_id = school
            return await call_next(request)
        return refusal(error, headers={"WWW-Authenticate": API_KEY_HEADER})


def session_readable(request: Request, path: str) -> bool:
    """Whether the request is a read an operator's session may make."""
    return request.method in SESSION_METHODS and SESSION_READABLE.fullmatch(path) is not None


async def _operator_reading(request: Request, path: str) -> str | None:
    """The signed-in operator making a session-readable request, if any (the dashboard is
    mounted on this app; without it, only the key opens these paths)."""
    auth = getattr(request.app.state, "dashboard_auth", None)
    if auth is None or not session_readable(request, path):
        return None
    session = await auth.session_of(request)
    return session.operator if session is not None else None
