"""The execution notice body: the order id and revision, never the order itself."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

# The Hub's real payload is not public (research §2); this Standard Webhooks-style envelope
# is the shape Esteira's gateway parses.
NOTICE_TYPE = "sisbajud.execution.notice"


def build_notice(
    order_id: str,
    revision: int,
    *,
    occurred_at: datetime | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`{"type", "timestamp", "data": {"orderId", "revision", …extra}}`."""
    when = occurred_at or datetime.now(UTC)
    return {
        "type": NOTICE_TYPE,
        "timestamp": when.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "data": {"orderId": order_id, "revision": revision, **(extra or {})},
    }


def encode(notice: dict[str, Any]) -> bytes:
    """Compact JSON bytes; the signature covers exactly these bytes."""
    return json.dumps(notice, separators=(",", ":"), ensure_ascii=False).encode()
