"""The owner Midaz reports for a ledger, kept a few seconds: one ledger read per window, not
one per order."""

from __future__ import annotations

import time
import weakref
from typing import Protocol

from activities.sisbajud.m2m import M2MSession


class OwnerSource(Protocol):
    """What the cache needs of a Midaz client (clients.py imports this module)."""

    m2m: M2MSession

    @property
    def ledger_path(self) -> str: ...

    async def owner(self) -> str | None: ...

# Short: an owner changed in Midaz is seen by the orders that start after this many seconds,
# and at once after Midaz refuses us anything on that ledger (403).
OWNER_TTL_SECONDS = 15.0

# Keyed by the token session (one per worker HTTP client and institution client), so a new
# client, like each test's worker, starts with nothing cached.
_REPORTED: weakref.WeakKeyDictionary[M2MSession, dict[str, tuple[float, str | None]]] = (
    weakref.WeakKeyDictionary())


async def reported_owner(midaz: OwnerSource) -> str | None:
    """`midaz.owner()`, read again once the last answer is `OWNER_TTL_SECONDS` old."""
    ledgers = _REPORTED.setdefault(midaz.m2m, {})
    cached = ledgers.get(midaz.ledger_path)
    now = time.monotonic()
    if cached is not None and now < cached[0]:
        return cached[1]
    owner = await midaz.owner()
    ledgers[midaz.ledger_path] = (now + OWNER_TTL_SECONDS, owner)
    return owner


def forget(midaz: OwnerSource) -> None:
    """Drop the owner kept for `midaz`'s ledger (Midaz refused us: ownership may have moved)."""
    _REPORTED.get(midaz.m2m, {}).pop(midaz.ledger_path, None)
