"""The OAuth 2.0 client-credentials token endpoint the Midaz and Mensageria simulators share."""

from __future__ import annotations

import base64
import hmac
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from shared.contracts.dev_credentials import (
    DEV_M2M_CLIENT_ID,
    DEV_M2M_CLIENT_SECRET,
    DEV_M2M_SUBJECT,
)

TOKEN_PATH = "/oauth/token"
DEFAULT_TTL_S = 3600


@dataclass(frozen=True)
class OAuthClient:
    """A client the simulator knows: its secret and the subject its tokens carry."""

    secret: str
    subject: str


def dev_clients() -> dict[str, OAuthClient]:
    """The client `esteira dev` and the tests use when nothing else is configured."""
    return {DEV_M2M_CLIENT_ID: OAuthClient(DEV_M2M_CLIENT_SECRET, DEV_M2M_SUBJECT)}


def parse_client(text: str) -> tuple[str, OAuthClient]:
    """`id:secret[:subject]` (the subject defaults to the id), as the `--client` flag takes."""
    client_id, _, rest = text.partition(":")
    secret, _, subject = rest.partition(":")
    if not client_id or not secret:
        raise ValueError("expected CLIENT_ID:SECRET[:SUBJECT]")
    return client_id, OAuthClient(secret, subject or client_id)


@dataclass
class TokenIssuer:
    """Issues opaque bearer tokens to known clients and says whether one is still good."""

    clients: Mapping[str, OAuthClient] = field(default_factory=dev_clients)
    # Static tokens accepted as they are (test harnesses); None: any bearer not issued here.
    static_tokens: frozenset[str] | None = None
    ttl_s: int = DEFAULT_TTL_S
    clock: Callable[[], float] = time.time
    lock: threading.Lock = field(default_factory=threading.Lock)
    issued: dict[str, tuple[str, float]] = field(default_factory=dict)  # token -> (sub, expiry)
    requests: int = 0  # token requests answered, granted or not

    def issue(self, client_id: str, secret: str) -> dict[str, Any] | None:
        """A token response for good credentials (compared in constant time), else None."""
        with self.lock:
            self.requests += 1
            client = self.clients.get(client_id)
            if client is None or not hmac.compare_digest(client.secret.encode(), secret.encode()):
                return None
            token = secrets.token_urlsafe(32)
            self.issued[token] = (client.subject, self.clock() + self.ttl_s)
        return {"access_token": token, "token_type": "Bearer", "expires_in": self.ttl_s,
                "sub": client.subject}

    def check(self, token: str) -> str | None:
        """Why `token` is refused (`expired`, `unknown`), or None when it may call the API."""
        with self.lock:
            known = self.issued.get(token)
        if known is not None:
            return "expired" if known[1] <= self.clock() else None
        if self.static_tokens is None or token in self.static_tokens:
            return None
        return "unknown"

    def expire_all(self) -> int:
        """Make every issued token expired now (tests of the refresh path)."""
        with self.lock:
            for token, (subject, _) in self.issued.items():
                self.issued[token] = (subject, self.clock() - 1)
            return len(self.issued)


def _credentials(request: Request, form: Mapping[str, str]) -> tuple[str, str]:
    """`client_secret_basic` (RFC 6749 §2.3.1: form-urlencoded id and secret) or the form."""
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "basic" and value:
        try:
            client_id, _, secret = base64.b64decode(value).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            return "", ""
        return unquote(client_id), unquote(secret)
    return form.get("client_id", ""), form.get("client_secret", "")


def token_router(issuer_of: Callable[[Request], TokenIssuer]) -> APIRouter:
    """`POST /oauth/token` (grant_type=client_credentials) and the test knobs under `/_sim`."""
    router = APIRouter()

    @router.post(TOKEN_PATH, name="oauth.token")
    async def token(request: Request) -> JSONResponse:
        raw = parse_qs((await request.body()).decode(errors="replace"))
        form = {key: values[0] for key, values in raw.items()}
        if form.get("grant_type") != "client_credentials":
            return _oauth_error(400, "unsupported_grant_type")
        answer = issuer_of(request).issue(*_credentials(request, form))
        if answer is None:
            return _oauth_error(401, "invalid_client")
        return JSONResponse(answer, headers={"Cache-Control": "no-store"})

    @router.get("/_sim/oauth")
    async def oauth_stats(request: Request) -> dict[str, Any]:
        issuer = issuer_of(request)
        return {"tokenRequests": issuer.requests, "issued": len(issuer.issued)}

    @router.post("/_sim/oauth/expire")
    async def expire(request: Request) -> dict[str, Any]:
        return {"expired": issuer_of(request).expire_all()}

    return router


def _oauth_error(status: int, error: str) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Basic realm="simulator"'} if status == 401 else None
    return JSONResponse({"error": error}, status_code=status, headers=headers)
