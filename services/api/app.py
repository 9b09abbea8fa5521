"""The REST API application: routes, auth, error mapping."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from services.api.auth import ApiKeyMiddleware
from services.api.context import ApiContext
from services.api.routes import pickup, signer, sisbajud, system
from shared.errors import ErrorCode, EsteiraError
from shared.version import short_version

log = logging.getLogger("esteira.api")


def create_app(context: ApiContext) -> FastAPI:
    """Build the app around an `ApiContext` (no I/O happens here)."""
    app = FastAPI(
        title="Esteira",
        version=short_version(),
        openapi_url="/api/openapi.json",
        docs_url="/api/docs",
        redoc_url=None,
    )
    app.state.context = context
    app.add_middleware(ApiKeyMiddleware, api_key=context.api_key)
    app.include_router(system.router)
    app.include_router(signer.router)
    app.include_router(pickup.router)
    app.include_router(sisbajud.router)
    app.add_exception_handler(EsteiraError, _esteira_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected_error)
    return app


async def _esteira_error(_request: Request, exc: EsteiraError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status)


async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
    error = EsteiraError(ErrorCode.REQUEST_INVALID, "The request is not valid.")
    return JSONResponse({**error.body(), "errors": exc.errors()}, status_code=error.status)


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("Unhandled error on %s %s", request.method, request.url.path)
    error = EsteiraError(ErrorCode.INTERNAL, "An unexpected error occurred; see the log.")
    return JSONResponse(error.body(), status_code=error.status)
