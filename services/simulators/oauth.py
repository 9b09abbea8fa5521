"""The token endpoints the Midaz and Mensageria simulators share: Lerian's auth service
(`POST /v1/login/oauth/access_token`, JSON, as lib-auth's `GetApplicationToken` calls it) and
RFC 6749 client credentials (`POST /oauth/token`, form + Basic). Both issue RS256 JWT
application tokens shaped as lib-auth reads them: `type` `application` (not `normal-user`, so
Midaz authorizes the call as the product's M2M role), `sub` `<owner>/<id>`, `azp` the client."""

from __future__ import annotations

import base64
import functools
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote

import httpx
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import RSAKey

from shared.contracts.dev_credentials import (
    DEV_M2M_CLIENT_ID,
    DEV_M2M_CLIENT_SECRET,
    DEV_M2M_SUBJECT,
)

TOKEN_PATH = "/oauth/token"
LERIAN_TOKEN_PATH = "/v1/login/oauth/access_token"
DEFAULT_TTL_S = 3600
ISSUER = "esteira-auth-simulator"
# lib-auth: any `type` other than `normal-user` is an M2M (application) token.
APPLICATION_TYPE = "application"


@functools.cache
def signing_key() -> RSAKey:
    """One RSA key per process (generating one per app would slow every test)."""
    return RSAKey.generate_key(2048)


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
    """Issues RS256 JWT application tokens to known clients and says whether a bearer is one
    of them, unexpired; any other bearer (opaque, forged, foreign) is refused, as Midaz's
    lib-auth refuses it."""

    clients: Mapping[str, OAuthClient] = field(default_factory=dev_clients)
    ttl_s: int = DEFAULT_TTL_S
    clock: Callable[[], float] = time.time
    lock: threading.Lock = field(default_factory=threading.Lock)
    issued: dict[str, tuple[str, float]] = field(default_factory=dict)  # jti -> (sub, expiry)
    requests: int = 0  # token requests answered, granted or not

    def issue(self, client_id: str, secret: str) -> dict[str, Any] | None:
        """A signed application token for good credentials (compared in constant time)."""
        with self.lock:
            self.requests += 1
            client = self.clients.get(client_id)
            if client is None or not hmac.compare_digest(client.secret.encode(), secret.encode()):
                return None
        return self.mint(client_id)

    def mint(self, client_id: str) -> dict[str, Any]:
        """A token for a known client, asked for by no request (a harness's own bearer: not
        counted in `requests`, which tells how often the executor asked)."""
        client = self.clients[client_id]
        with self.lock:
            now = int(self.clock())
            jti = secrets.token_urlsafe(16)
            self.issued[jti] = (client.subject, now + self.ttl_s)
        claims = {"iss": ISSUER, "sub": client.subject, "azp": client_id,
                  "type": APPLICATION_TYPE, "iat": now, "exp": now + self.ttl_s, "jti": jti}
        token = jwt.encode({"alg": "RS256", "typ": "JWT"}, claims, signing_key())
        return {"access_token": token, "token_type": "Bearer", "expires_in": self.ttl_s,
                "sub": client.subject}

    def check(self, token: str) -> str | None:
        """Why `token` is refused (`malformed`, `signature`, `expired`, `unknown`), or None.

        Every bearer is read as a JWT, as lib-auth does; the signature and expiry are what
        Lerian's auth service checks behind it (`/v1/authorize`)."""
        return self._verify(token)

    def _verify(self, token: str) -> str | None:
        if token.count(".") != 2:
            return "malformed"
        try:
            claims = jwt.decode(token, signing_key()).claims
        except (JoseError, ValueError):
            return "signature"
        with self.lock:
            known = self.issued.get(str(claims.get("jti")))
        if known is None:
            return "unknown"
        return "expired" if known[1] <= self.clock() else None

    def expire_all(self) -> int:
        """Make every issued token expired now (tests of the refresh path)."""
        with self.lock:
            for jti, (subject, _) in self.issued.items():
                self.issued[jti] = (subject, self.clock() - 1)
            return len(self.issued)


class IssuedBearer(httpx.Auth):
    """A harness's credential for an in-process simulator `app`: a token its issuer mints for
    `client_id` (default: the first client it knows), minted again when the simulator answers
    401 (expired on its clock, or by a test)."""

    requires_request_body = True

    def __init__(self, app: Any, client_id: str | None = None) -> None:
        self._app, self._client_id = app, client_id
        self._token: str | None = None

    def _mint(self) -> str:
        issuer: TokenIssuer = self._app.state.oauth
        client_id = self._client_id or next(iter(issuer.clients))
        return str(issuer.mint(client_id)["access_token"])

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Send with the current token; once more with a new one after a 401 that refused it
        (an injected 401 is the answer itself)."""
        if self._token is None:
            self._token = self._mint()
        request.headers["Authorization"] = f"Bearer {self._token}"
        response = yield request
        if response.status_code == 401 and self._app.state.oauth.check(self._token):
            self._token = self._mint()
            request.headers["Authorization"] = f"Bearer {self._token}"
            yield request


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
    """Lerian's `POST /v1/login/oauth/access_token`, RFC 6749's `POST /oauth/token` and the
    test knobs under `/_sim`."""
    router = APIRouter()

    @router.post(LERIAN_TOKEN_PATH, name="auth.access_token")
    async def lerian_token(request: Request) -> JSONResponse:
        # lib-auth: `{grantType, clientId, clientSecret}` in, `oauth2Token` out.
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = None
        if not isinstance(body, dict) or not all(
                isinstance(body.get(k), str) for k in ("grantType", "clientId", "clientSecret")):
            return _lerian_error(400, "Bad Request",
                                 "grantType, clientId and clientSecret are required strings")
        if body["grantType"] != "client_credentials":
            return _lerian_error(400, "Bad Request", "unsupported grantType")
        answer = issuer_of(request).issue(body["clientId"], body["clientSecret"])
        if answer is None:
            return _lerian_error(401, "Unauthorized", "invalid client credentials")
        return JSONResponse({"accessToken": answer["access_token"], "tokenType": "Bearer",
                             "expiresIn": answer["expires_in"], "refreshToken": ""},
                            headers={"Cache-Control": "no-store"})

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


def _lerian_error(status: int, title: str, message: str) -> JSONResponse:
    """A refusal as lib-auth reads it (`commons.Response`); the auth service's own codes are
    not public, so `code` carries the status (lib-auth takes a string or a number)."""
    return JSONResponse({"code": str(status), "title": title, "message": message},
                        status_code=status)


def _oauth_error(status: int, error: str) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Basic realm="simulator"'} if status == 401 else None
    return JSONResponse({"error": error}, status_code=status, headers=headers)
