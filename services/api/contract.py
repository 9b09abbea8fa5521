"""The OpenAPI document as the API behaves: who needs the key, each operation's refusals."""

from __future__ import annotations

from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, RouteContext, iter_route_contexts

from services.api.auth import PUBLIC_PATHS, SELF_AUTHENTICATED_PREFIXES, SESSION_READABLE
from services.api.routes.sisbajud_admin import require_api_key
from shared.auth import API_KEY_HEADER
from shared.problem import PROBLEM_MEDIA_TYPE, Problem

API_KEY_SCHEME = "ApiKey"
BEARER_SCHEME = "BearerToken"
# The dashboard's session cookie, which the session-readable paths accept besides the key.
SESSION_SCHEME = "OperatorSession"
SESSION_COOKIE = "esteira_session"
# Self-authenticated routes whose credential is an `Authorization: Bearer` token (the guardian
# app's access token, an approver's per-job token); the others carry a token in their path.
BEARER_PREFIXES = ("/api/pickup/guardian/", "/api/approvals/")
PROBLEM_REF = {"$ref": f"#/components/schemas/{Problem.__name__}"}
# FastAPI's own 422 body, which this API never sends (it answers with a problem).
FASTAPI_VALIDATION_SCHEMAS = ("HTTPValidationError", "ValidationError")
_WHY = {
    401: "The credential is missing or not valid (auth.missing-key, auth.invalid-key, …).",
    404: "Nothing with that id (resource.not-found or the domain's not-found code).",
    409: "The resource is not in a state that allows this (the domain's conflict codes).",
    422: "The request is not valid (request.invalid or the domain's validation codes).",
}


def document_contract(app: FastAPI) -> None:
    """Serve `app`'s OpenAPI document with security schemes and problem refusals."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = get_openapi(title=app.title, version=app.version, routes=app.routes,
                                   description=app.description)
            describe(document, app.routes)
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def describe(document: dict[str, Any], routes: list[Any]) -> None:
    """Add the schemes, each operation's credential and refusals, in place."""
    components = document.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    for name in FASTAPI_VALIDATION_SCHEMAS:
        schemas.pop(name, None)
    schemas[Problem.__name__] = Problem.model_json_schema()
    for schema in schemas.values():
        _mark_binary(schema)
    components["securitySchemes"] = {
        API_KEY_SCHEME: {"type": "apiKey", "in": "header", "name": API_KEY_HEADER},
        BEARER_SCHEME: {"type": "http", "scheme": "bearer"},
        SESSION_SCHEME: {"type": "apiKey", "in": "cookie", "name": SESSION_COOKIE},
    }
    # Contexts, not `app.routes`: an included router's routes sit behind it, with its prefix.
    for route in iter_route_contexts(routes):
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        item = document["paths"].get(route.path_format, {})
        for method in route.methods:
            operation = item.get(method.lower())
            if operation is not None:
                _describe_operation(operation, route, method)


def _mark_binary(schema: dict[str, Any]) -> None:
    # OpenAPI 3.1 says "bytes" with contentMediaType; generators still look for 3.0's
    # `format: binary` to hand the caller a file parameter, and 3.1 allows both.
    for prop in schema.get("properties", {}).values():
        if prop.get("type") == "string" and "contentMediaType" in prop:
            prop.setdefault("format", "binary")


def _describe_operation(operation: dict[str, Any], route: RouteContext, method: str) -> None:
    scheme = credential_scheme(route)
    if scheme is not None:
        operation["security"] = [{scheme: []}]
        if method in ("GET", "HEAD") and SESSION_READABLE.fullmatch(route.path_format):
            operation["security"].append({SESSION_SCHEME: []})
    responses = operation.setdefault("responses", {})
    refusals = set()
    if scheme is not None or route.path_format.startswith(SELF_AUTHENTICATED_PREFIXES):
        refusals.add(401)
    if "{" in route.path_format:
        refusals.add(404)
    if method != "GET":
        refusals.add(409)
    if operation.get("parameters") or operation.get("requestBody") or "422" in responses:
        refusals.add(422)
    for status in sorted(refusals):
        known = responses.get(str(status), {})
        responses[str(status)] = {
            "description": known.get("description") if status != 422 and known
            else f"{HTTPStatus(status).phrase}: {_WHY[status]}",
            "content": {PROBLEM_MEDIA_TYPE: {"schema": PROBLEM_REF}},
        }


def credential_scheme(route: RouteContext) -> str | None:
    """The security scheme a route needs: the API key, a bearer token, or None (public)."""
    path = route.path_format
    if path.startswith(BEARER_PREFIXES):
        return BEARER_SCHEME
    if any(dependency.call is require_api_key for dependency in _dependencies(route.dependant)):
        return API_KEY_SCHEME
    if not path.startswith("/api") or path in PUBLIC_PATHS \
            or path.startswith(SELF_AUTHENTICATED_PREFIXES):
        return None
    return API_KEY_SCHEME


def _dependencies(dependant: Dependant) -> Iterator[Dependant]:
    for dependency in dependant.dependencies:
        yield dependency
        yield from _dependencies(dependency)
