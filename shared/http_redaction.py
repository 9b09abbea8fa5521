"""Request targets fit for logs and traces: tokens in paths and secret query values masked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.routing import Match
from starlette.types import Scope

from shared.logs.masking import MASK, is_secret_key


def is_secret_parameter(name: str) -> bool:
    """A path or query parameter whose value authenticates (`token`, `api_key`), not an id."""
    return is_secret_key(name) and not name.endswith("_id")


class TargetRedactor:
    """Masks the path parameters of an app's routes that are secrets, and secret query values.

    A request its routes don't match (a 404) is logged as it came; configured tokens are still
    masked there by the log masker, as on every line.
    """

    def __init__(self, app: Any = None) -> None:
        self._app = app

    def path(self, scope: Scope) -> str:
        """`/api/signer/lacuna/webhook/abc` -> `/api/signer/lacuna/webhook/***`."""
        params = scope.get("path_params")
        if params is None:  # not routed (yet): match the routes, as the router will
            params = self._matched_params(scope)
        path: str = scope["path"]
        for name, value in params.items():
            secret = str(value)
            if not is_secret_parameter(name) or not secret:
                continue
            if "/" in secret:
                path = path.replace(secret, MASK)
            else:
                path = "/".join(MASK if part == secret else part for part in path.split("/"))
        return path

    @staticmethod
    def query(query: str) -> str:
        """`access_token=abc&page=2` -> `access_token=***&page=2`."""
        if not query:
            return ""
        pairs = parse_qsl(query, keep_blank_values=True)
        return urlencode([(key, MASK if is_secret_parameter(key) else value)
                          for key, value in pairs], safe="*/:,")

    def target(self, scope: Scope) -> str:
        """Path and query, masked, as one request target."""
        masked = self.query(scope.get("query_string", b"").decode("latin-1"))
        return self.path(scope) + (f"?{masked}" if masked else "")

    def _matched_params(self, scope: Scope) -> Mapping[str, Any]:
        for route in getattr(self._app, "routes", ()):
            match, child = route.matches(scope)
            if match is Match.FULL:
                params: Mapping[str, Any] = child.get("path_params", {})
                return params
        return {}
