"""Webhook signature schemes behind one interface; Standard Webhooks v1 is the first."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from activities.sisbajud.contracts.errors import WebhookErrorCode

SECRET_PREFIX = "whsec_"
DEFAULT_MAX_SKEW_S = 300
# The spec's `webhook-timestamp` is an "integer unix timestamp (seconds since epoch)". The
# signature covers the header as sent, so a validly signed one that is no such time (not plain
# digits, or past 9999-12-31T23:59:59Z, the last second a date holds) is only off the clock:
# the seed accepts a delivery out of EXECUTOR_HUB_WEBHOOK_MAX_SKEW_SEC with a warning.
MAX_TIMESTAMP = 253_402_300_799
_DIGITS = re.compile(r"[0-9]{1,12}")


class VerdictCode(StrEnum):
    """Why a delivery was accepted or refused; stable values for logs and metrics."""

    OK = "signature.ok"
    # The refusals are the contract's codes (`activities/sisbajud/contracts/errors.py`).
    MISSING_HEADER = WebhookErrorCode.SIGNATURE_MISSING_HEADER.value
    NO_MATCH = WebhookErrorCode.SIGNATURE_NO_MATCH.value


@dataclass(frozen=True)
class Verdict:
    """The outcome of a verification; skew is reported, never a refusal by itself."""

    valid: bool
    code: VerdictCode
    message_id: str | None = None
    timestamp: int | None = None  # None: the header is no Unix time (see `raw_timestamp`)
    skew_s: int | None = None  # receiver clock minus webhook-timestamp
    skewed: bool = False  # |skew_s| beyond the configured maximum, or no time: accept, warn
    secret_index: int | None = None  # which configured secret matched (rotation visibility)
    detail: str = ""
    raw_timestamp: str | None = None  # the header as sent (what the signature covers)


class SignatureScheme(Protocol):
    """A way of proving a delivery came from the sender."""

    def verify(self, headers: Mapping[str, str], body: bytes) -> Verdict:
        """Check `body` (raw bytes as received) against the delivery's headers."""
        ...


def parse_secret(secret: str) -> bytes:
    """Key bytes of a `whsec_<base64>` secret; the prefix is optional, as in the spec's libs."""
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except binascii.Error as exc:
        raise ValueError("webhook secret is not valid base64") from exc
    if not key:
        raise ValueError("webhook secret is empty")
    return key


def parse_timestamp(raw: str) -> int | None:
    """Seconds since the epoch in plain digits, up to `MAX_TIMESTAMP`; else None."""
    if not _DIGITS.fullmatch(raw):
        return None
    value = int(raw)
    return value if value <= MAX_TIMESTAMP else None


class StandardWebhooksV1:
    """`webhook-id` / `webhook-timestamp` / `webhook-signature: v1,<b64> …`, several secrets."""

    def __init__(
        self,
        secrets: Sequence[str],
        *,
        max_skew_s: int = DEFAULT_MAX_SKEW_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not secrets:
            raise ValueError("at least one webhook secret is required")
        self._keys = [parse_secret(s) for s in secrets]
        self._max_skew_s = max_skew_s
        self._clock = clock

    def verify(self, headers: Mapping[str, str], body: bytes) -> Verdict:
        """Valid when any `v1` entry matches any configured secret."""
        lower = {k.lower(): v for k, v in headers.items()}
        msg_id = lower.get("webhook-id")
        raw_ts = lower.get("webhook-timestamp")
        signatures = lower.get("webhook-signature")
        missing = [
            name
            for name, value in (
                ("webhook-id", msg_id),
                ("webhook-timestamp", raw_ts),
                ("webhook-signature", signatures),
            )
            if not value
        ]
        if missing:
            return Verdict(
                False, VerdictCode.MISSING_HEADER, msg_id, detail="missing " + ", ".join(missing)
            )
        assert msg_id is not None and raw_ts is not None and signatures is not None
        index = self._match(msg_id, raw_ts, body, signatures)
        if index is None:
            return Verdict(
                False,
                VerdictCode.NO_MATCH,
                msg_id,
                raw_timestamp=raw_ts,
                detail="no v1 signature matches a configured secret",
            )
        ts = parse_timestamp(raw_ts)
        if ts is None:
            return Verdict(True, VerdictCode.OK, msg_id, skewed=True, secret_index=index,
                           raw_timestamp=raw_ts,
                           detail="webhook-timestamp is not a Unix time in seconds")
        skew = int(self._clock()) - ts
        skewed = abs(skew) > self._max_skew_s
        return Verdict(True, VerdictCode.OK, msg_id, ts, skew, skewed, secret_index=index,
                       raw_timestamp=raw_ts)

    def _match(self, msg_id: str, raw_ts: str, body: bytes, header: str) -> int | None:
        candidates = [
            entry.split(",", 1)[1].encode() for entry in header.split() if entry.startswith("v1,")
        ]
        # `{id}.{timestamp}.{body}` with the timestamp exactly as the header carries it.
        content = f"{msg_id}.{raw_ts}.".encode() + body
        for index, key in enumerate(self._keys):
            expected = base64.b64encode(hmac.new(key, content, hashlib.sha256).digest())
            # compare_digest keeps the comparison time independent of where bytes differ.
            if any(hmac.compare_digest(expected, candidate) for candidate in candidates):
                return index
        return None
