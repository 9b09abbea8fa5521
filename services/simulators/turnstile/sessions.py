"""Login sessions and the simulated device clock."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable


class Clock:
    """Device time in Unix seconds; tests move it with `set` / `advance`."""

    def __init__(self, source: Callable[[], float] = time.time) -> None:
        self._source = source
        self._offset = 0.0

    def now(self) -> int:
        """Current device time, whole seconds as the device logs it."""
        return int(self._source() + self._offset)

    def set(self, unix: float) -> None:
        """Jump device time to `unix`."""
        self._offset = unix - self._source()

    def advance(self, seconds: float) -> None:
        """Move device time forward (or back, if negative)."""
        self._offset += seconds

    def reset(self) -> None:
        """Back to the source clock."""
        self._offset = 0.0


class Sessions:
    """Login sessions with an idle TTL, refreshed on every authenticated command."""

    def __init__(self, clock: Clock, ttl_seconds: float) -> None:
        self._clock = clock
        self.ttl_seconds = ttl_seconds
        self._expiry: dict[str, float] = {}

    def issue(self) -> str:
        """A new opaque token, shaped like the device's 24-character sessions."""
        token = secrets.token_urlsafe(18)
        self._expiry[token] = self._clock.now() + self.ttl_seconds
        return token

    def touch(self, token: str | None) -> bool:
        """Whether `token` is live; a live token gets its idle timer restarted."""
        if not token or token not in self._expiry:
            return False
        if self._clock.now() >= self._expiry[token]:
            del self._expiry[token]
            return False
        self._expiry[token] = self._clock.now() + self.ttl_seconds
        return True

    def revoke(self, token: str | None) -> None:
        """End one session (logout)."""
        self._expiry.pop(token or "", None)

    def expire_all(self) -> int:
        """Drop every session, as a device reboot does; returns how many were live."""
        count = len(self._expiry)
        self._expiry.clear()
        return count
