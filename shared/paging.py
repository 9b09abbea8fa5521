"""Keyset pages: every list the doors serve is newest (or oldest) first, `?limit=&cursor=`,
answered as items plus the cursor of the next page."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import Select, tuple_
from sqlalchemy.sql.elements import ColumnElement

from shared.db.models import as_utc
from shared.errors import ErrorCode, EsteiraError

T = TypeVar("T")
Q = TypeVar("Q", bound=Select[Any])
# A page never holds more than this, whatever the client asks.
MAX_PAGE = 500


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list, and the cursor that continues it (None on the last page)."""

    items: list[T]
    next_cursor: str | None


def encode_cursor(*values: datetime | int | str) -> str:
    """An opaque cursor holding the sort key of the last row sent."""
    parts = [as_utc(v).isoformat() if isinstance(v, datetime) else v for v in values]
    return base64.urlsafe_b64encode(json.dumps(parts).encode()).decode()


def decode_cursor(cursor: str, *kinds: type) -> tuple[Any, ...]:
    """The sort key a cursor holds, as `kinds`; request.invalid when it isn't one of ours."""
    try:
        parts = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        if not isinstance(parts, list) or len(parts) != len(kinds):
            raise ValueError(cursor)
        return tuple(_value(kind, part) for kind, part in zip(kinds, parts, strict=True))
    except (ValueError, TypeError, UnicodeDecodeError):
        raise EsteiraError(ErrorCode.REQUEST_INVALID, "The cursor is not valid.") from None


def _value(kind: type, part: Any) -> Any:
    if kind is datetime:
        return datetime.fromisoformat(part)
    if not isinstance(part, kind) or isinstance(part, bool):
        raise TypeError(part)
    return part


def after(query: Q, columns: Sequence[Any], cursor: str | None, *,
          kinds: Sequence[type], descending: bool = True) -> Q:
    """`query` ordered by `columns` and continued after `cursor` (a row-value comparison, so
    an index on the columns answers page 1,000 as it answers page 1)."""
    if cursor:
        key: ColumnElement[bool]
        bound = tuple_(*columns)
        values = tuple_(*decode_cursor(cursor, *kinds))
        key = bound < values if descending else bound > values
        query = query.where(key)
    return query.order_by(*(c.desc() if descending else c.asc() for c in columns))


def page_of(rows: Sequence[T], limit: int, key: Callable[[T], tuple[Any, ...]]) -> Page[T]:
    """The page from `limit + 1` rows fetched: the extra row only says another page exists."""
    items = list(rows[:limit])
    more = len(rows) > limit
    return Page(items, encode_cursor(*key(items[-1])) if more and items else None)


def bounded(limit: int) -> int:
    """`limit` kept within 1..MAX_PAGE."""
    return max(1, min(limit, MAX_PAGE))
