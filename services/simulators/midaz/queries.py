"""List queries as Midaz parses them: limits, sort order, date windows, cursors, metadata."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from services.simulators.midaz.errors import MidazError

T = TypeVar("T")

MAX_LIMIT = 100


@dataclass(frozen=True)
class ListQuery:
    """Parsed common list parameters."""

    limit: int
    descending: bool
    page: int
    cursor: str | None
    start: float
    end: float
    metadata: tuple[str, str] | None


def _months_back(ts: float, months: int) -> float:
    # Go's AddDate(0, -n, 0): calendar months, overflowing days roll forward.
    dt = datetime.fromtimestamp(ts, UTC)
    month_index = dt.year * 12 + dt.month - 1 - months
    year, month = divmod(month_index, 12)
    first = dt.replace(year=year, month=month + 1, day=1)
    return (first + timedelta(days=dt.day - 1)).timestamp()


def _parse_date(value: str, end: bool) -> float:
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d"):
        try:
            dt = datetime.strptime(value, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
        if end and fmt == "%Y-%m-%d":
            dt += timedelta(days=1) - timedelta(microseconds=1)
        return dt.timestamp()
    raise MidazError("0077")


def parse(params: Mapping[str, str], now: float, window_months: int) -> ListQuery:
    """Validate `limit`, `sort_order`, `page`, `cursor`, dates and one `metadata.<k>`."""
    try:
        limit = int(params.get("limit", "10"))
        page = int(params.get("page", "1"))
    except ValueError as exc:
        raise MidazError("0082", status=400) from exc
    if limit > MAX_LIMIT:
        raise MidazError("0080", MAX_LIMIT)
    if limit < 1 or page < 1:
        raise MidazError("0082", status=400)
    order = params.get("sort_order", "asc").lower()
    if order not in ("asc", "desc"):
        raise MidazError("0081")
    start_raw, end_raw = params.get("start_date"), params.get("end_date")
    if (start_raw is None) != (end_raw is None):
        raise MidazError("0083")
    if start_raw is not None and end_raw is not None:
        start, end = _parse_date(start_raw, False), _parse_date(end_raw, True)
    else:
        # Without dates Midaz only looks back MAX_PAGINATION_MONTH_DATE_RANGE months.
        start, end = _months_back(now, window_months), now
    # Midaz keeps a single `metadata.*` filter (which one is map-order dependent).
    metadata = next(
        ((k.split("metadata.", 1)[1], v) for k, v in params.items() if k.startswith("metadata.")),
        None,
    )
    return ListQuery(limit, order == "desc", page, params.get("cursor"), start, end, metadata)


def metadata_matches(metadata: dict[str, Any] | None, wanted: tuple[str, str] | None) -> bool:
    """Equality on one metadata key, compared as strings."""
    if wanted is None:
        return True
    key, value = wanted
    if not metadata or key not in metadata:
        return False
    found = metadata[key]
    text = ("true" if found else "false") if isinstance(found, bool) else str(found)
    return text == value


def cursor_page(
    items: Sequence[T],
    query: ListQuery,
    key: Callable[[T], str],
    render: Callable[[T], dict[str, Any]],
) -> dict[str, Any]:
    """Cursor pagination over items already sorted ascending by `key`."""
    ordered = list(reversed(items)) if query.descending else list(items)
    start = 0
    if query.cursor:
        try:
            after = base64.urlsafe_b64decode(query.cursor.encode()).decode()
        except ValueError as exc:
            raise MidazError("0082", "cursor", status=400) from exc
        start = next((i + 1 for i, item in enumerate(ordered) if key(item) == after), len(ordered))
    chunk = ordered[start : start + query.limit]
    more = start + query.limit < len(ordered)
    next_cursor = (
        base64.urlsafe_b64encode(key(chunk[-1]).encode()).decode() if more and chunk else ""
    )
    # Backwards paging is not simulated; consumers here only follow next_cursor.
    return {
        "items": [render(i) for i in chunk],
        "limit": query.limit,
        "next_cursor": next_cursor,
        "prev_cursor": "",
    }


def page_page(
    items: Sequence[T], query: ListQuery, render: Callable[[T], dict[str, Any]]
) -> dict[str, Any]:
    """Page-based pagination (accounts, CRM instruments)."""
    ordered = list(reversed(items)) if query.descending else list(items)
    first = (query.page - 1) * query.limit
    return {
        "items": [render(i) for i in ordered[first : first + query.limit]],
        "page": query.page,
        "limit": query.limit,
    }
