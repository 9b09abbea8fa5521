"""The operator's cookie session: signed, expiring, carrying its CSRF token."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from shared.settings import Settings

SESSION_COOKIE = "esteira_session"
LOGIN_CSRF_COOKIE = "esteira_login_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"


@dataclass(frozen=True)
class Session:
    """A signed-in operator until `expires`, with the token every form must echo."""

    operator: str
    csrf: str
    expires: datetime


class SessionCodec:
    """Encodes sessions as `payload.signature` (HMAC-SHA256); tampered or expired -> None."""

    def __init__(self, secret: bytes, lifetime: timedelta) -> None:
        self._secret = secret
        self.lifetime = lifetime

    @classmethod
    def from_settings(cls, settings: Settings, api_key: str) -> SessionCodec:
        """The configured secret, else one derived from the API key (shared by every API
        process of the deployment, and rotated with it)."""
        configured = settings.dashboard.session_secret
        if configured is not None and configured.get_secret_value():
            secret = configured.get_secret_value().encode()
        else:
            secret = hmac.new(api_key.encode(), b"esteira-dashboard-session",
                              hashlib.sha256).digest()
        return cls(secret, timedelta(minutes=settings.dashboard.session_minutes))

    def issue(self, operator: str, now: datetime) -> tuple[str, Session]:
        """A new session for `operator` and its cookie value."""
        session = Session(operator, secrets.token_urlsafe(32), now + self.lifetime)
        payload = json.dumps({"op": session.operator, "csrf": session.csrf,
                              "exp": int(session.expires.timestamp())}).encode()
        body = base64.urlsafe_b64encode(payload).decode().rstrip("=")
        return f"{body}.{self._sign(body)}", session

    def read(self, value: str | None, now: datetime) -> Session | None:
        """The session in a cookie value, or None if missing, forged or expired."""
        if not value or "." not in value:
            return None
        body, signature = value.rsplit(".", 1)
        # Bytes, not str: compare_digest raises on non-ASCII str, and a cookie holds whatever
        # the client sent.
        if not hmac.compare_digest(signature.encode(), self._sign(body).encode()):
            return None
        try:
            data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
            expires = datetime.fromtimestamp(int(data["exp"]), tz=now.tzinfo)
            session = Session(str(data["op"]), str(data["csrf"]), expires)
        except (ValueError, KeyError, TypeError):
            return None
        return session if now < session.expires else None

    def _sign(self, body: str) -> str:
        digest = hmac.new(self._secret, body.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def tokens_match(presented: str | None, expected: str | None) -> bool:
    """Constant-time CSRF comparison; a missing side never matches."""
    if not presented or not expected:
        return False
    return hmac.compare_digest(presented.encode(), expected.encode())
