"""RFC 3161 timestamps from a profile's TSAs, tried in order: the next one when one fails."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import aiohttp
from asn1crypto import cms
from pyhanko.sign.timestamps import HTTPTimeStamper, TimeStamper, TimestampRequestError

from .errors import ErrorCode, SignerCryptoError

TSA_HASH_ALGORITHMS = ("sha256", "sha384", "sha512")
# What a TSA that doesn't answer usefully raises: its network, its HTTP status, its reply.
_TSA_FAILURES = (TimestampRequestError, aiohttp.ClientError, asyncio.TimeoutError, OSError,
                 ValueError)


@dataclass(frozen=True)
class TsaEndpoint:
    """One TSA: its URL and how to authenticate (basic or bearer); secrets stay out of repr."""

    url: str
    auth: str = "none"
    username: str | None = None
    secret: str | None = field(default=None, repr=False)
    timeout_seconds: float = 10.0

    @property
    def shown(self) -> str:
        """The URL as logs and messages show it: without any user information."""
        return shown_url(self.url)

    def stamper(self) -> HTTPTimeStamper:
        """pyHanko's HTTP client for this TSA (a session per request: nothing to pool)."""
        headers = None
        if self.auth == "bearer" and self.secret:
            headers = {"Authorization": f"Bearer {self.secret}"}
        elif self.auth == "basic" and self.username is not None:
            headers = {"Authorization": basic_authorization(self.username, self.secret or "")}
        # pyHanko's timeout is the whole request in seconds (aiohttp ClientTimeout.total).
        return HTTPTimeStamper(self.url, timeout=self.timeout_seconds, headers=headers)


def basic_authorization(username: str, password: str) -> str:
    """The RFC 7617 `Authorization: Basic` value (UTF-8 credentials)."""
    return "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode("ascii")


def shown_url(url: str) -> str:
    """`url` with any `user:password@` removed."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))


class FailoverTimeStamper(TimeStamper):
    """Asks each configured TSA in turn; none answering is `signature.timestamp-unavailable`."""

    def __init__(self, endpoints: Sequence[TsaEndpoint]) -> None:
        if not endpoints:
            raise ValueError("a timestamped level needs at least one TSA URL")
        super().__init__()
        self.endpoints = tuple(endpoints)
        self._stampers = [endpoint.stamper() for endpoint in self.endpoints]
        # Which TSA gave the last token (for the job's history), as shown.
        self.answered_by: str | None = None

    async def async_timestamp(self, message_digest: bytes, md_algorithm: str
                              ) -> cms.ContentInfo:
        """The first token a TSA grants, in configured order."""
        problems = []
        for endpoint, stamper in zip(self.endpoints, self._stampers, strict=True):
            try:
                token = await stamper.async_timestamp(message_digest, md_algorithm)
            except _TSA_FAILURES as exc:
                problems.append(f"{endpoint.shown}: {_reason(exc)}")
                continue
            self.answered_by = endpoint.shown
            return token
        raise SignerCryptoError(ErrorCode.TIMESTAMP_UNAVAILABLE,
                                "no TSA answered (" + "; ".join(problems) + ")")


def _reason(exc: BaseException) -> str:
    # pyHanko wraps the network error in "Error while contacting timestamp service".
    if isinstance(exc, TimestampRequestError) and exc.__cause__ is not None:
        exc = exc.__cause__
    if isinstance(exc, aiohttp.ClientResponseError):
        return f"HTTP {exc.status}"
    if isinstance(exc, asyncio.TimeoutError):
        return "timed out"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
