"""Client-credentials tokens for the executor's calls (Authlib's httpx client), asked for as
Lerian's auth service takes them (JSON) or as RFC 6749 says (form + HTTP Basic)."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qsl

import httpx
from authlib.integrations.base_client import OAuthError
from pydantic import SecretStr

with warnings.catch_warnings():
    # Authlib 1.9 prefers `httpx2` when installed and warns on the plain httpx it falls back
    # to; the executor's clients are httpx, so that fallback is what we want.
    warnings.simplefilter("ignore")
    from authlib.integrations.httpx_client import AsyncOAuth2Client

log = logging.getLogger("esteira.sisbajud")


# Lerian's auth service: the path lib-auth's `GetApplicationToken` and midaz-sdk-golang's
# access manager post to; RFC 6749's token endpoint as the OAuth 2.0 simulators serve it.
LERIAN_TOKEN_PATH = "/v1/login/oauth/access_token"
OAUTH2_TOKEN_PATH = "/oauth/token"
TOKEN_PATHS = {"lerian": LERIAN_TOKEN_PATH, "oauth2": OAUTH2_TOKEN_PATH}
LERIAN_JSON = "lerian_json"


@dataclass(frozen=True)
class ClientCredentials:
    """Where to ask for a token, how and as whom; `name` only labels log lines (and is no
    part of the identity: institutions sharing an endpoint and client share one token)."""

    name: str = field(compare=False)
    token_url: str
    client_id: str
    client_secret: SecretStr
    auth: Literal["lerian", "oauth2"] = "oauth2"


class TokenUnavailable(Exception):
    """No token: the endpoint refused the client or could not be reached."""

    def __init__(self, message: str, *, refused: bool) -> None:
        super().__init__(message)
        self.refused = refused


class _Shared(httpx.AsyncBaseTransport):
    """Sends through the worker's client: one pool, its timeouts, the tests' mounts."""

    def __init__(self, http: weakref.ref[httpx.AsyncClient]) -> None:
        self._http = http

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await _alive(self._http).send(request)


def _alive(http: weakref.ref[httpx.AsyncClient]) -> httpx.AsyncClient:
    client = http()
    if client is None:
        raise RuntimeError("the HTTP client of this token session is gone")
    return client


class M2MSession:
    """One client's token: fetched on first use, renewed `leeway` seconds before it expires
    (Authlib) and once after a 401; every call carries it as a bearer."""

    def __init__(self, http: httpx.AsyncClient, credentials: ClientCredentials,
                 leeway: float) -> None:
        self.credentials = credentials
        # Weak: the registry below is keyed by the client, which must stay collectable.
        self._http = weakref.ref(http)
        self._lock = asyncio.Lock()
        lerian = credentials.auth == "lerian"
        self._oauth = AsyncOAuth2Client(
            client_id=credentials.client_id,
            client_secret=credentials.client_secret.get_secret_value(),
            token_endpoint_auth_method=LERIAN_JSON if lerian else "client_secret_basic",
            token_endpoint=credentials.token_url, grant_type="client_credentials",
            leeway=int(leeway), transport=_Shared(self._http), timeout=http.timeout)
        if lerian:
            self._oauth.register_client_auth_method((LERIAN_JSON, _lerian_json_body))
        self._oauth.register_compliance_hook("access_token_response",
                                             _lerian_answer if lerian else _oauth2_answer)

    async def token(self) -> dict[str, Any]:
        """The current token response: fetched now if there is none, renewed by Authlib when
        it expires within `leeway` (here, so a failing token endpoint is never mistaken for
        a failing API call)."""
        async with self._lock:
            try:
                if not self._oauth.token:
                    await self._fetch()
                else:
                    await self._oauth.ensure_active_token(self._oauth.token)
            except (OAuthError, httpx.HTTPError) as exc:
                raise self._unavailable(exc) from exc
        return dict(self._oauth.token)

    async def subject(self) -> str | None:
        """`sub` of the token response, else the `sub` claim of a JWT access token."""
        token = await self.token()
        return token.get("sub") or _jwt_subject(token.get("access_token", ""))

    async def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """`method url` with the bearer; on a 401 one fresh token and one more try."""
        await self.token()
        response = await self._send(method, url, **kwargs)
        if response.status_code != 401:
            return response
        stale = self._oauth.token
        async with self._lock:
            if self._oauth.token is stale:  # not already renewed by a concurrent call
                try:
                    await self._fetch()
                except (OAuthError, httpx.HTTPError) as exc:
                    raise self._unavailable(exc) from exc
        response = await self._send(method, url, **kwargs)
        if response.status_code == 401:
            log.error("%s refused a freshly issued token for client %s (401): check the "
                      "client's grants there", self.credentials.name,
                      self.credentials.client_id)
        return response

    async def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        # The worker's client sends; Authlib's token auth adds the bearer.
        return await _alive(self._http).request(method, url, auth=self._oauth.token_auth,
                                                **kwargs)

    async def _fetch(self) -> None:
        token = await self._oauth.fetch_token(grant_type="client_credentials")
        if not token.get("access_token"):
            self._oauth.token = None
            raise OAuthError(error="invalid_token_response",
                             description="the answer carries no access_token")
        log.info("Got a token from %s for client %s", self.credentials.token_url,
                 self.credentials.client_id)

    def _unavailable(self, exc: Exception) -> TokenUnavailable:
        status = exc.response.status_code if isinstance(exc, httpx.HTTPStatusError) else None
        refused = isinstance(exc, OAuthError) or (status is not None and status < 500)
        reason = (" ".join(filter(None, (exc.error, exc.description)))
                  if isinstance(exc, OAuthError) else status or f"{type(exc).__name__}: {exc}")
        message = (f"{self.credentials.name} token endpoint {self.credentials.token_url} "
                   f"{'refused' if refused else 'failed'} client "
                   f"{self.credentials.client_id}: {reason}")
        log.error(message)
        return TokenUnavailable(message, refused=refused)


def _lerian_json_body(auth: Any, method: str, uri: str, headers: Any, body: bytes
                      ) -> tuple[str, Any, bytes]:
    """The token request as lib-auth's `GetApplicationToken` sends it: a JSON body
    `{grantType, clientId, clientSecret}` in place of Authlib's form, no Basic header."""
    form = dict(parse_qsl(body.decode() if isinstance(body, bytes) else body or ""))
    payload = {"grantType": form.get("grant_type", "client_credentials"),
               "clientId": auth.client_id, "clientSecret": auth.client_secret}
    headers["Content-Type"] = "application/json"
    headers["Accept"] = "application/json"
    return uri, headers, json.dumps(payload).encode()


def _lerian_answer(response: httpx.Response) -> httpx.Response:
    """Lerian's answer in Authlib's terms: `accessToken`/`tokenType`/`expiresIn` (lib-auth's
    `oauth2Token`) as `access_token`/…, a refusal's `{code, title, message}` (lib-auth's
    `commons.Response`, `code` a string or a number) as an OAuth error."""
    if response.status_code >= 500:
        return response  # Authlib raises it as an HTTP error: unreachable, not refused
    try:
        body = response.json()
    except ValueError:
        return response
    if not isinstance(body, dict):
        return response
    if response.status_code != 200 or not body.get("accessToken"):
        error = str(body.get("code") or f"http_{response.status_code}")
        mapped: dict[str, Any] = {"error": error,
                                  "error_description": body.get("message") or body.get("title")}
    else:
        mapped = {"access_token": body["accessToken"],
                  "token_type": body.get("tokenType") or "Bearer"}
        expires_in = body.get("expiresIn") or _jwt_lifetime(body["accessToken"])
        if expires_in:
            mapped["expires_in"] = int(expires_in)
        # `refreshToken` is left out: a client-credentials token is renewed by asking again
        # (Authlib would otherwise try a refresh grant Lerian's clients never send).
    return httpx.Response(response.status_code, json=mapped, request=response.request)


def _oauth2_answer(response: httpx.Response) -> httpx.Response:
    """A non-200 JSON answer without RFC 6749's `error` (a proxy's 404, say) as an OAuth error
    naming the status, so the connection check can tell a wrong URL from a refused client."""
    if response.status_code in (200, *range(500, 600)):
        return response
    try:
        body = response.json()
    except ValueError:
        return response
    if isinstance(body, dict) and "error" not in body:
        body = {"error": f"http_{response.status_code}"}
        return httpx.Response(response.status_code, json=body, request=response.request)
    return response


def _jwt_claims(access_token: str) -> dict[str, Any]:
    """The unverified claims of a JWT we were just issued ({} for opaque tokens)."""
    parts = access_token.split(".")
    if len(parts) != 3:
        return {}
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return {}
    return claims if isinstance(claims, dict) else {}


def _jwt_subject(access_token: str) -> str | None:
    """The unverified `sub` claim of a JWT we were just issued (None for opaque tokens)."""
    sub = _jwt_claims(access_token).get("sub")
    return str(sub) if sub else None


def _jwt_lifetime(access_token: str) -> int | None:
    """Seconds left by the JWT's `exp` (an answer without `expiresIn` still expires)."""
    exp = _jwt_claims(access_token).get("exp")
    return max(int(exp - time.time()), 0) if isinstance(exp, int | float) else None


# One session per client and HTTP client: every activity of a worker shares its tokens.
_SESSIONS: weakref.WeakKeyDictionary[httpx.AsyncClient, dict[tuple[str, str], M2MSession]] = (
    weakref.WeakKeyDictionary())


def session_for(http: httpx.AsyncClient, credentials: ClientCredentials,
                leeway: float) -> M2MSession:
    """The shared session of `credentials` on `http` (created on first use): one token per
    (token endpoint, client id), whatever institution asks."""
    sessions = _SESSIONS.setdefault(http, {})
    key = (credentials.token_url, credentials.client_id)
    session = sessions.get(key)
    if session is None or session.credentials != credentials:
        session = sessions[key] = M2MSession(http, credentials, leeway)
    return session
