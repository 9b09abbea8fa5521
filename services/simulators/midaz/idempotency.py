"""Midaz's Redis idempotency claims: SETNX an empty value, fill it on success."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DEFAULT_TTL_S = 300


def parse_ttl(header: str | None) -> int:
    """`X-TTL` in seconds; missing, non-numeric or <= 0 falls back to 300 (no maximum)."""
    try:
        ttl = int(header) if header is not None else 0
    except ValueError:
        ttl = 0
    return ttl if ttl > 0 else DEFAULT_TTL_S


@dataclass
class Claim:
    """One key: `value` is None while claimed-but-empty."""

    value: dict[str, Any] | None
    expires_at: float


@dataclass(frozen=True)
class ClaimResult:
    """Outcome of `claim`: `claimed`, `replay` (with the stored body) or `conflict`."""

    outcome: str
    value: dict[str, Any] | None = None


class IdempotencyStore:
    """Keys scoped to organization + ledger, shared by every transaction-create route."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._claims: dict[str, Claim] = {}

    @staticmethod
    def scoped(org_id: str, ledger_id: str, key: str) -> str:
        """The Redis key Midaz uses: `idempotency:{org:ledger:key}`."""
        return f"idempotency:{{{org_id}:{ledger_id}:{key}}}"

    def _live(self, scoped: str) -> Claim | None:
        claim = self._claims.get(scoped)
        if claim is not None and claim.expires_at <= self._clock():
            del self._claims[scoped]
            return None
        return claim

    def claim(self, scoped: str, ttl_s: int) -> ClaimResult:
        """SETNX: claim a free key, replay a filled one, refuse an empty one."""
        existing = self._live(scoped)
        if existing is None:
            self._claims[scoped] = Claim(None, self._clock() + ttl_s)
            return ClaimResult("claimed")
        if existing.value is None:
            return ClaimResult("conflict")
        return ClaimResult("replay", existing.value)

    def fill(self, scoped: str, value: dict[str, Any]) -> None:
        """Store the success body under the claim, keeping its original expiry."""
        claim = self._live(scoped)
        if claim is not None:
            claim.value = value

    def release(self, scoped: str) -> None:
        """Delete the claim (failures before balances move)."""
        self._claims.pop(scoped, None)

    def flush(self) -> None:
        """Forget every key (a Redis flush or eviction)."""
        self._claims.clear()

    def describe(self) -> list[dict[str, Any]]:
        """Live keys for `/_sim/idempotency`."""
        now = self._clock()
        live = [(k, c) for k in list(self._claims) if (c := self._live(k)) is not None]
        return [
            {"key": k, "filled": c.value is not None, "expiresInS": round(c.expires_at - now, 3)}
            for k, c in live
        ]
