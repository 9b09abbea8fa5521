"""The simulators' fault plan: the next N calls to a route (name or glob) misbehave."""

from __future__ import annotations

import fnmatch
import threading
from typing import Generic, Protocol, Self, TypeVar


class FaultRule(Protocol):
    """A posted rule: which routes it matches and how many calls it still spoils."""

    route: str
    count: int

    def model_copy(self) -> Self: ...

    def model_dump(self) -> dict[str, object]: ...


F = TypeVar("F", bound=FaultRule)


class FaultPlan(Generic[F]):
    """Pending rules, consumed first-match in insertion order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[F] = []

    def add(self, fault: F) -> None:
        """Queue a rule."""
        with self._lock:
            self._rules.append(fault)

    def take(self, route: str) -> F | None:
        """Consume one use of the first rule matching `route`."""
        with self._lock:
            for rule in self._rules:
                if fnmatch.fnmatchcase(route, rule.route):
                    rule.count -= 1
                    if rule.count == 0:
                        self._rules.remove(rule)
                    return rule.model_copy()
        return None

    def clear(self) -> None:
        """Drop every rule."""
        with self._lock:
            self._rules.clear()

    def describe(self) -> list[dict[str, object]]:
        """Pending rules for `GET /_sim/faults`."""
        with self._lock:
            return [rule.model_dump() for rule in self._rules]
