"""The codec server: the Temporal Web UI and CLI send payloads here to see them decrypted.

Protocol (Temporal's samples-go `codec-server/protocol.md`): `POST …/encode` and `POST
…/decode` with a `Payloads` message in protobuf JSON, `{"payloads": [...]}`, answered in
kind. The UI calls it from the browser, cross-origin, with the operator's dashboard cookie
(`credentials: include`); the CLI with `--codec-auth "Bearer <API key>"`.
"""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError
from temporalio.api.common.v1 import Payloads

from services.app_context import ContextDep
from shared.auth import API_KEY_HEADER, keys_match
from shared.errors import ErrorCode, EsteiraError
from shared.payload_codec import EncryptionCodec, PayloadDecryptError
from shared.problem import refusal
from shared.settings import Settings
from shared.temporal import payload_keys
from shared.temporal_ui import origin_of

PREFIX = "/api/temporal-codec"
router = APIRouter(prefix=PREFIX, tags=["system"], include_in_schema=False)
# What the UI sends (services/data-encoder in temporalio/ui): JSON, its namespace, and the
# access token when it is set to pass one.
ALLOWED_HEADERS = "Content-Type, X-Namespace, Authorization, X-API-Key"
PREFLIGHT_MAX_AGE = "600"
# A page of history decodes in one call; far beyond it is not a UI request.
MAX_BODY_BYTES = 16 * 1024 * 1024


def allowed_origins(settings: Settings) -> set[str]:
    """`PayloadCodec:CorsOrigins` and the public UI (`Dashboard:TemporalUiUrl`); in
    Development also the embedded Web UI's own addresses."""
    origins = {origin.rstrip("/") for origin in settings.payload_codec.cors_origins}
    if settings.dashboard.temporal_ui_url:
        origins.add(origin_of(settings.dashboard.temporal_ui_url))
    if settings.environment == "Development":
        port = settings.ports.temporal_ui
        origins |= {f"http://{host}:{port}" for host in {settings.host, "127.0.0.1", "localhost"}}
    return origins


def _cors_headers(request: Request, settings: Settings) -> dict[str, str]:
    origin = request.headers.get("Origin")
    if origin is None or origin.rstrip("/") not in allowed_origins(settings):
        return {"Vary": "Origin"}
    # Credentials mode needs the exact origin, never `*`.
    return {"Access-Control-Allow-Origin": origin, "Access-Control-Allow-Credentials": "true",
            "Vary": "Origin"}


async def _authenticated(request: Request, api_key: str) -> bool:
    """The API key (header or bearer, as the CLI's `--codec-auth` sends it) or an operator's
    dashboard session."""
    if keys_match(request.headers.get(API_KEY_HEADER), api_key):
        return True
    scheme, _, token = (request.headers.get("Authorization") or "").partition(" ")
    if scheme.lower() == "bearer" and keys_match(token.strip(), api_key):
        return True
    auth = getattr(request.app.state, "dashboard_auth", None)
    if auth is None:
        return False
    return await auth.session_of(request) is not None


def _codec(request: Request, settings: Settings) -> EncryptionCodec | None:
    state = request.app.state
    if not hasattr(state, "payload_codec"):
        keys = payload_keys(settings)
        state.payload_codec = EncryptionCodec(keys) if keys else None
    return state.payload_codec


@router.options("/{operation}")
async def preflight(operation: str, request: Request, ctx: ContextDep) -> Response:
    """CORS preflight: the browser asks before it sends the UI's JSON cross-origin."""
    headers = _cors_headers(request, ctx.settings)
    if "Access-Control-Allow-Origin" in headers:
        headers |= {"Access-Control-Allow-Methods": "POST, OPTIONS",
                    "Access-Control-Allow-Headers": ALLOWED_HEADERS,
                    "Access-Control-Max-Age": PREFLIGHT_MAX_AGE}
    return Response(status_code=204, headers=headers)


@router.post("/{operation}")
async def transcode(operation: str, request: Request, ctx: ContextDep) -> Response:
    """`encode` or `decode` a `Payloads` message with this deployment's payload keys."""
    cors = _cors_headers(request, ctx.settings)
    if operation not in {"encode", "decode"}:
        return refusal(EsteiraError(ErrorCode.REQUEST_INVALID,
                                    "The codec server answers /encode and /decode."),
                       headers=cors)
    if not await _authenticated(request, ctx.api_key):
        error = EsteiraError(ErrorCode.AUTH_MISSING_KEY,
                             "The codec server needs the API key (X-API-Key or "
                             "`Authorization: Bearer`) or a signed-in dashboard operator.")
        return refusal(error, headers={**cors, "WWW-Authenticate": "Bearer"})
    if not (request.headers.get("Content-Type") or "").startswith("application/json"):
        # What the UI and CLI send; a form's text/plain POST (no preflight) is not a codec call.
        return refusal(EsteiraError(ErrorCode.REQUEST_INVALID,
                                    "The codec server takes application/json."), headers=cors)
    body = await request.body()
    try:
        if len(body) > MAX_BODY_BYTES:
            raise ValueError("too large")
        message = ParseDict(_json(body), Payloads())
    except (ValueError, ParseError, TypeError):
        return refusal(EsteiraError(ErrorCode.REQUEST_INVALID,
                                    'The body must be {"payloads": [...]} in protobuf JSON.'),
                       headers=cors)
    codec = _codec(request, ctx.settings)
    payloads = list(message.payloads)
    if codec is not None:
        try:
            payloads = await (codec.encode(payloads) if operation == "encode"
                              else codec.decode(payloads))
        except PayloadDecryptError as exc:
            return refusal(EsteiraError(ErrorCode.REQUEST_INVALID, str(exc)), headers=cors)
    return JSONResponse(MessageToDict(Payloads(payloads=payloads)), headers=cors)


def _json(body: bytes) -> dict:
    value = json.loads(body)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value
