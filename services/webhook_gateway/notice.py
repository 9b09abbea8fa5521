"""What makes a signed delivery a usable execution notice."""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, ValidationError

NOTICE_TYPE = "sisbajud.execution.notice"
# The store keeps a revision in an INTEGER column (32-bit on PostgreSQL): a larger one is
# not a revision this executor can record, so the notice is unusable, not a store outage.
MAX_REVISION = 2**31 - 1


class _NoticeData(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    orderId: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9._:-]+$")
    revision: int = Field(ge=1, le=MAX_REVISION)


class _Notice(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    data: _NoticeData


@dataclass(frozen=True)
class ParsedNotice:
    """The order and revision a notice names, or why the body is unusable."""

    order_id: str | None = None
    revision: int | None = None
    unusable: str | None = None


def parse_notice(body: bytes) -> ParsedNotice:
    """`{"type": "sisbajud.execution.notice", "data": {"orderId", "revision"}}`, else a reason."""
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return ParsedNotice(unusable=f"body is not JSON: {exc}")
    except ValueError as exc:  # an integer literal past Python's 4300-digit conversion limit
        return ParsedNotice(unusable=f"body is not JSON this executor reads: {exc}"[:300])
    except RecursionError:
        return ParsedNotice(unusable="body is not JSON this executor reads: nested too deep")
    try:
        notice = _Notice.model_validate(payload)
    except RecursionError:
        return ParsedNotice(unusable="not an execution notice (nested too deep)")
    except ValidationError as exc:
        fields = ", ".join(".".join(map(str, e["loc"])) or "body" for e in exc.errors())
        return ParsedNotice(unusable=f"not an execution notice ({fields})")
    if notice.type != NOTICE_TYPE:
        return ParsedNotice(unusable=f"unexpected notice type {notice.type!r}")
    return ParsedNotice(notice.data.orderId, notice.data.revision)
