"""Prometheus metrics of the pickup domain (shown by `/api/metrics` with everything else)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

OUTBOUND_PENDING = Gauge(
    "esteira_pickup_outbound_pending", "Outbound commands waiting for confirmation, by queue",
    ["queue"], multiprocess_mode="livemostrecent")
OUTBOUND_FAILED = Gauge(
    "esteira_pickup_outbound_failed", "Outbound commands refused and waiting for an operator",
    ["queue"], multiprocess_mode="livemostrecent")
OUTBOUND_OLDEST = Gauge(
    "esteira_pickup_outbound_oldest_pending_seconds",
    "Age of the oldest pending outbound command (a stuck revocation shows here)", ["queue"],
    multiprocess_mode="livemostrecent")
SWEEP_CHANGED = Counter(
    "esteira_pickup_sweep_changed_total", "Rows changed by each sweep", ["sweep"])
SWEEP_SKIPPED = Counter(
    "esteira_pickup_sweep_skipped_total", "Rows a sweep left alone because a race was lost",
    ["sweep"])
LEDGER_ATTEMPTS = Counter(
    "esteira_pickup_ledger_attempts_total", "Turnstile command deliveries by outcome",
    ["command", "outcome"])
NOTIFICATION_ATTEMPTS = Counter(
    "esteira_pickup_notification_attempts_total",
    "Guardian notification sends by kind and outcome (sent, retry, failed = gave up)",
    ["kind", "outcome"])
TIMERS_FIRED = Counter(
    "esteira_pickup_timers_fired_total", "Per-entity timers fired, by kind and effect",
    ["kind", "changed"])


def set_queue(queue: str, *, pending: int, failed: int, oldest_seconds: float) -> None:
    """Publish one queue's backlog."""
    OUTBOUND_PENDING.labels(queue).set(pending)
    OUTBOUND_FAILED.labels(queue).set(failed)
    OUTBOUND_OLDEST.labels(queue).set(oldest_seconds)
