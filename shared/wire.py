"""The one JSON casing on the wire: camelCase, as the seeds write it."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

T = TypeVar("T")


class WireModel(BaseModel):
    """A body the API sends or reads: snake_case in Python, camelCase in JSON.

    Built from domain values (`from_attributes`), so a route returns what its face returns
    and the response model says how it looks on the wire.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True,
                              from_attributes=True)


class PageOut(WireModel, Generic[T]):
    """A page of a list: its items and the cursor of the next page (null on the last)."""

    items: list[T]
    next_cursor: str | None = None
