"""The REST API: its routes, the API key, the stream hub and one error mapping for the app."""

from __future__ import annotations

import logging

from asyncpg.exceptions import CannotConnectNowError, LockNotAvailableError
from asyncpg.exceptions import DataError as PostgresDataError
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, DBAPIError, OperationalError
from starlette.exceptions import HTTPException

from services.api.auth import SELF_AUTHENTICATED_PREFIXES, ApiKeyMiddleware
from services.api.contract import document_contract
from services.api.routes import (
    pickup,
    signer,
    signer_approvals,
    signer_catalog,
    signer_files,
    signer_instances,
    signer_lacuna,
    sisbajud,
    system,
    temporal_codec,
)
from services.api.upload_limit import BodyRefused, UploadLimit
from services.app_context import ApiContext
from services.pickup_stream.sse import install_stream_hub, stream_lifespan
from shared.errors import ErrorCode, EsteiraError
from shared.http_metrics import ResponseCounter
from shared.problem import ProblemResponse, problem_body, refusal
from shared.version import short_version

log = logging.getLogger("esteira.api")
# Seconds a client should wait on a busy store: about one busy wait of another writer.
STORE_BUSY_RETRY_AFTER = "2"


def create_rest_app(context: ApiContext) -> FastAPI:
    """The app with the REST API around an `ApiContext` (no I/O happens here)."""
    app = FastAPI(
        title="Esteira",
        version=short_version(),
        openapi_url="/api/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
        lifespan=stream_lifespan,
    )
    app.state.context = context
    install_stream_hub(app, context.faces.pickup)
    # Inside the key check: an upload without the key is refused before its size is.
    app.add_middleware(UploadLimit, signer=lambda: context.faces.signer)
    app.add_middleware(ApiKeyMiddleware, api_key=context.api_key,
                       school_keys=context.settings.pickup.school_keys)
    # Outside the key check, so refusals (401) are counted too.
    app.add_middleware(ResponseCounter, service="api", verdicts=("/api/ready",))
    app.include_router(system.router)
    app.include_router(temporal_codec.router)
    app.include_router(signer.router)
    app.include_router(signer_files.router)
    app.include_router(signer_catalog.router)
    app.include_router(signer_approvals.router)
    app.include_router(signer_lacuna.router)
    app.include_router(signer_instances.router)
    app.include_router(pickup.router)
    app.include_router(sisbajud.router)
    app.add_exception_handler(EsteiraError, _esteira_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(DBAPIError, _store_error)
    app.add_exception_handler(OverflowError, _unstorable_value)
    app.add_exception_handler(Exception, _unexpected_error)
    document_contract(app)
    return app


async def _esteira_error(_request: Request, exc: EsteiraError) -> JSONResponse:
    return refusal(exc)


async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
    error = EsteiraError(ErrorCode.REQUEST_INVALID, "The request is not valid.")
    # Where and why only: the rejected input (bytes, Decimals, exceptions in `ctx`) may not
    # be JSON at all, and echoing it back could repeat a secret.
    problems = [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")),
                 "type": str(e.get("type", ""))} for e in exc.errors()]
    return refusal(error, errors=problems)


async def _http_error(_request: Request, exc: HTTPException) -> JSONResponse:
    # What the framework refuses before a route runs (a body it can't parse, a path or a
    # method no route has) answers in the house shape too, never `{"detail": …}`.
    if isinstance(exc, BodyRefused):
        return refusal(exc.error)
    if exc.status_code == 400:
        return refusal(EsteiraError(ErrorCode.REQUEST_INVALID,
                                    f"The request body could not be read: {exc.detail}"))
    if exc.status_code == 404:
        return refusal(EsteiraError(ErrorCode.NOT_FOUND, "No such resource."))
    body = problem_body(exc.status_code, ErrorCode.REQUEST_INVALID, str(exc.detail))
    return ProblemResponse(body, status_code=exc.status_code, headers=exc.headers)


async def _store_error(request: Request, exc: DBAPIError) -> JSONResponse:
    if isinstance(exc, DataError) or _caused_by(exc, (OverflowError, PostgresDataError)):
        return await _unstorable_value(request, exc)
    if _store_busy(exc):
        # Another writer holds the store past the busy wait: nothing is wrong with the
        # request, it just can't be served right now.
        log.warning("Store busy on %s %s: %s", request.method, _loggable_path(request),
                    type(exc.orig).__name__ if exc.orig is not None else type(exc).__name__)
        error = EsteiraError(ErrorCode.STORE_UNAVAILABLE,
                             "The store is busy; retry in a moment.")
        return refusal(error, headers={"Retry-After": STORE_BUSY_RETRY_AFTER})
    return await _unexpected_error(request, exc)


def _store_busy(exc: DBAPIError) -> bool:
    """A lock or a lost connection, not a bad statement: SQLite `database is locked` /
    `busy`, PostgreSQL lock-not-available, or a connection the pool had to drop."""
    if exc.connection_invalidated or _caused_by(exc, (LockNotAvailableError,
                                                      CannotConnectNowError)):
        return True
    return isinstance(exc, OperationalError) and any(
        word in str(exc.orig).lower() for word in ("database is locked", "database is busy",
                                                   "database table is locked"))


def _caused_by(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, kinds):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _loggable_path(request: Request) -> str:
    """The request path with whatever follows a self-authenticated prefix (tokens) hidden."""
    path = request.url.path
    for prefix in SELF_AUTHENTICATED_PREFIXES:
        if path.startswith(prefix):
            return prefix + "***"
    return path


async def _unstorable_value(request: Request, exc: Exception) -> JSONResponse:
    # A value the schema allows but the store can't hold (an id past 64 bits, a NUL byte in
    # PostgreSQL text, a duration past datetime's range) is the client's input, not our fault.
    log.info("Refused an unstorable value on %s %s: %s", request.method, _loggable_path(request),
             type(exc).__name__)
    error = EsteiraError(ErrorCode.REQUEST_INVALID,
                         "A value in the request is out of the range this service can store.")
    return refusal(error)


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("Unhandled error on %s %s", request.method, _loggable_path(request))
    error = EsteiraError(ErrorCode.INTERNAL, "An unexpected error occurred; see the log.")
    return refusal(error)
