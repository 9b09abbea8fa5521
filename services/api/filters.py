"""Enum query filters: a value outside the enum is refused (422), never an empty list."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BeforeValidator


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


# Upper-case state filters were always matched without regard to case (`state=parked`).
AnyCase = BeforeValidator(_upper)


def value_of(member: StrEnum | None) -> str | None:
    """The plain string of a filter's member (what the store compares), or None."""
    return None if member is None else member.value
