"""Validate recorded HTTP exchanges against an OpenAPI 3.1 document (JSON Schema 2020-12).

OpenAPI 3.1's schemas are JSON Schema 2020-12, so `jsonschema` validates them as they are; this
module adds what openapi-core would: find the operation by method and path template, check the
declared path and query parameters, the request body and the answer's status, media type and
body. Where Midaz's document lags its Go code, `Overrides` says so with the code's word."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

DOC_URI = "urn:midaz:openapi"


@dataclass(frozen=True)
class Exchange:
    """One request and its answer, as the executor sent and received them."""

    method: str
    path: str
    query: dict[str, list[str]]
    request_type: str
    request_body: bytes
    status: int
    response_type: str
    response_body: bytes

    @classmethod
    def of(cls, request: httpx.Request, response: httpx.Response, body: bytes) -> Exchange:
        """Record `request` and its answer (`body`: the answer's bytes, already read)."""
        query: dict[str, list[str]] = {}
        for key, value in request.url.params.multi_items():
            query.setdefault(key, []).append(value)
        return cls(request.method, request.url.path, query,
                   request.headers.get("content-type", ""), request.content,
                   response.status_code, response.headers.get("content-type", ""), body)

    @property
    def label(self) -> str:
        """`POST /v1/…/transactions/block -> 201`."""
        return f"{self.method} {self.path} -> {self.status}"


@dataclass
class Overrides:
    """Where the document and Midaz's Go code disagree, what the code does (each cited)."""

    # operationId -> the status the handler sets on its output (`Status: http.StatusCreated`)
    # while the document, generated from the output type, lists only "200".
    created: frozenset[str] = frozenset()
    # operationId -> a JSON Schema for a body the document publishes as opaque bytes
    # (`format: binary`), written from the handler's Go input struct.
    request_bodies: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Properties a schema's `additionalProperties: false` omits but the Go struct carries.
    extra_properties: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Properties a schema lists as required that the Go struct omits when empty (omitempty).
    optional: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Plain-text 401 bodies the auth middleware in front of the documented handlers writes
    # for operations with `security` (they never reach the handler, so never the document).
    auth_layer_401: frozenset[str] = frozenset()


class OpenApiDocument:
    """An OpenAPI 3.1 document: its operations by method and path template."""

    def __init__(self, path: Path, *, prefix: str = "", overrides: Overrides | None = None
                 ) -> None:
        self.doc: dict[str, Any] = yaml.safe_load(path.read_text())
        self.prefix = prefix
        self.overrides = overrides or Overrides()
        schemas = self.doc.setdefault("components", {}).setdefault("schemas", {})
        for name, extra in self.overrides.extra_properties.items():
            schemas[name].setdefault("properties", {}).update(extra)
        for name, fields in self.overrides.optional.items():
            schemas[name]["required"] = [f for f in schemas[name].get("required", [])
                                         if f not in fields]
        self._registry = Registry().with_resource(
            DOC_URI, Resource.from_contents(self.doc, default_specification=DRAFT202012))
        self._routes = [(method.upper(), _template(self.prefix + route), route, operation)
                        for route, item in self.doc["paths"].items()
                        for method, operation in item.items()
                        if method in ("get", "post", "put", "patch", "delete", "head")]

    def operation(self, method: str, path: str
                  ) -> tuple[str, dict[str, Any], dict[str, str]] | None:
        """(operationId, operation, path parameters) of `method path`, None when undocumented."""
        # Literal segments win over parameters (`accounts/alias/{alias}` over `accounts/{id}`).
        found = [(route.count("{"), route, op, match.groupdict())
                 for m, pattern, route, op in self._routes if m == method
                 for match in [pattern.fullmatch(path)] if match]
        if not found:
            return None
        _, _, op, params = min(found, key=lambda f: f[0])
        return op.get("operationId", ""), op, params

    def check(self, exchange: Exchange) -> list[str]:
        """Every way `exchange` departs from the document (empty: it conforms)."""
        found = self.operation(exchange.method, exchange.path)
        if found is None:
            return [f"{exchange.label}: no such operation in the document"]
        op_id, op, path_params = found
        problems = self._parameters(op, path_params, exchange)
        problems += self._request(op_id, op, exchange)
        problems += self._response(op_id, op, exchange)
        return [f"{exchange.label} ({op_id}): {p}" for p in problems]

    def _validate(self, schema: dict[str, Any], value: Any) -> list[str]:
        validator = Draft202012Validator(schema, registry=self._registry,
                                         format_checker=Draft202012Validator.FORMAT_CHECKER)
        return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:200]}"
                for e in sorted(validator.iter_errors(value), key=lambda e: list(e.path))]

    def _parameters(self, op: dict[str, Any], path_params: dict[str, str],
                    exchange: Exchange) -> list[str]:
        problems: list[str] = []
        for param in op.get("parameters", []):
            name, where = param["name"], param["in"]
            values: list[str | None]
            if where == "path":
                values = [path_params.get(name)]
            elif where == "query":
                values = list(exchange.query.get(name, []))
            else:
                continue  # headers: the document types them all as strings
            if not values or values == [None]:
                if param.get("required"):
                    problems.append(f"{where} parameter {name} is required")
                continue
            for value in values:
                problems += [f"{where} {name}: {p}" for p in
                             self._validate(_rebase(param.get("schema", {})), value)]
        return problems

    def _request(self, op_id: str, op: dict[str, Any], exchange: Exchange) -> list[str]:
        body = op.get("requestBody")
        if body is None:
            return [] if not exchange.request_body else ["a body the operation does not take"]
        if not exchange.request_body:
            return ["the request body is required"] if body.get("required") else []
        media = _media(exchange.request_type)
        content = body.get("content", {})
        if media not in content:
            return [f"request media type {media!r}; the document takes {sorted(content)}"]
        try:
            value = json.loads(exchange.request_body)
        except ValueError:
            return ["the request body is not JSON"]
        schema = content[media].get("schema", {})
        if schema.get("format") == "binary":
            schema = self.overrides.request_bodies.get(op_id, {})
            if not schema:
                return ["an opaque body with no Go input schema to check it against"]
        return [f"request {p}" for p in self._validate(_rebase(schema), value)]

    def _response(self, op_id: str, op: dict[str, Any], exchange: Exchange) -> list[str]:
        if (exchange.status == 401 and op.get("security")
                and _media(exchange.response_type) == "text/plain"):
            body = exchange.response_body.decode(errors="replace")
            return [] if body in self.overrides.auth_layer_401 else [
                f"a 401 body {body[:60]!r} the auth layer does not write"]
        responses = op.get("responses", {})
        status = str(exchange.status)
        if status == "201" and "201" not in responses and op_id in self.overrides.created:
            status = "200"
        spec = responses.get(status) or (responses.get("default")
                                         if exchange.status >= 400 else None)
        if spec is None:
            return [f"status {exchange.status}; the document lists {sorted(responses)}"]
        content = spec.get("content")
        if not content:
            return [] if not exchange.response_body else ["a body where the document has none"]
        media = _media(exchange.response_type)
        if media not in content:
            return [f"answer media type {media!r}; the document says {sorted(content)}"]
        try:
            value = json.loads(exchange.response_body)
        except ValueError:
            return ["the answer is not JSON"]
        return [f"answer {p}" for p in self._validate(_rebase(content[media].get("schema", {})),
                                                      value)]


def _rebase(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with its local `$ref`s pointed into the document."""
    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: (DOC_URI + v if k == "$ref" and isinstance(v, str) and v.startswith("#")
                        else walk(v)) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node
    return walk(schema)


def _template(route: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[^}]+\})", route)
    return re.compile("".join(f"(?P<{p[1:-1]}>[^/]+)" if p.startswith("{") else re.escape(p)
                              for p in parts))


def _media(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


class Recorder(httpx.AsyncBaseTransport):
    """Passes every request to `inner` and keeps the exchange."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.exchanges: list[Exchange] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        await request.aread()
        response = await self.inner.handle_async_request(request)
        body = await response.aread()
        self.exchanges.append(Exchange.of(request, response, body))
        return httpx.Response(response.status_code, headers=response.headers, content=body,
                              request=request, extensions=response.extensions)
