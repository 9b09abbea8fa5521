"""In-memory Mensageria: seeded orders, withdrawals and every result received."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from services.simulators.fault_plan import FaultPlan
from services.simulators.mensageria.faults import Fault


def now_iso() -> str:
    """Current UTC time, RFC 3339."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class MensageriaState:
    """Orders by id, withdrawn statuses, results deduplicated by `X-Idempotency`."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    withdrawn: dict[str, int] = field(default_factory=dict)
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # first body per key
    attempts: list[dict[str, Any]] = field(default_factory=list)  # every POST, in order
    faults: FaultPlan[Fault] = field(default_factory=FaultPlan)

    def reset(self) -> None:
        """Forget orders, results and faults."""
        with self.lock:
            self.orders.clear()
            self.withdrawn.clear()
            self.results.clear()
            self.attempts.clear()
        self.faults.clear()

    def record(self, key: str, order_id: str, body: dict[str, Any], outcome: str) -> bool:
        """Log an attempt; keep the body if the key is new. Returns whether it was new."""
        with self.lock:
            first = self.results.get(key)
            self.attempts.append(
                {
                    "idempotencyKey": key,
                    "orderId": order_id,
                    "body": body,
                    "receivedAt": now_iso(),
                    "outcome": outcome if first is None else "replayed",
                    # A different body under a used key is a sender bug worth seeing in tests.
                    "conflicting": first is not None and first["body"] != body,
                }
            )
            if first is not None:
                first["deliveries"] += 1
                return False
            self.results[key] = {
                "idempotencyKey": key,
                "orderId": order_id,
                "body": body,
                "receivedAt": now_iso(),
                "deliveries": 1,
                "seq": len(self.results) + 1,
            }
            return True

    def log_refused(self, key: str | None, order_id: str, body: Any, status: int) -> None:
        """Log an attempt the simulator refused (fault, validation)."""
        with self.lock:
            self.attempts.append(
                {
                    "idempotencyKey": key,
                    "orderId": order_id,
                    "body": body,
                    "receivedAt": now_iso(),
                    "outcome": f"refused-{status}",
                    "conflicting": False,
                }
            )
