"""Answer models derived from store rows, for routes that send a row as it is dumped."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, create_model
from sqlmodel import SQLModel


def row_answer(table: type[SQLModel], **more: Any) -> type[BaseModel]:
    """A plain model with every field of `table` (and `more`), named as the row's class."""
    # Optional throughout: the model documents the row's shape and must never refuse a row
    # the route already sends (a nullable column, a field added later).
    fields: dict[str, Any] = {name: (info.annotation | None, None)
                              for name, info in table.model_fields.items()}
    fields.update({name: (annotation | None, None) for name, annotation in more.items()})
    return create_model(table.__name__, __config__=ConfigDict(extra="allow"),
                        __doc__=f"A {table.__name__} row as the API sends it.",
                        **fields)


def page_answer(item: type[BaseModel]) -> type[BaseModel]:
    """`{"items": [...], "nextCursor": …}` of `item`."""
    return create_model(f"{item.__name__}Page", __doc__=f"A page of {item.__name__} rows.",
                        items=(list[item], ...), nextCursor=(Any, None))  # type: ignore[valid-type]
