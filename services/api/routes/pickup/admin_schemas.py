"""Request bodies of the pickup records' edits: the revision (or version) seen, and changes."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

from pydantic import AwareDatetime, Field

from activities.pickup.contracts.board import Kind
from services.api.routes.pickup.credential_schemas import Body


class _Changes(Body):
    # Columns that can't be cleared: a null for them means "leave as is".
    _not_null: ClassVar[frozenset[str]] = frozenset({"name", "kind"})

    def changes(self, *skip: str) -> dict[str, Any]:
        """The fields the caller sent (an explicit null clears a nullable one)."""
        sent = self.model_dump(exclude_unset=True, exclude=set(skip))
        # Moments are stored in UTC (SQLite keeps only the wall time).
        return {k: v.astimezone(UTC) if isinstance(v, datetime) else v
                for k, v in sent.items() if v is not None or k not in self._not_null}


class StudentChanges(_Changes):
    """A student's name or registration, if still at `revision`."""

    revision: int = Field(ge=0)
    name: str | None = Field(default=None, min_length=1, max_length=200)
    registration: str | None = Field(default=None, min_length=1, max_length=64)


class GuardianChanges(_Changes):
    """A guardian's name, contact or CPF, if still at `revision`."""

    revision: int = Field(ge=0)
    name: str | None = Field(default=None, min_length=1, max_length=200)
    contact: str | None = Field(default=None, max_length=200)
    cpf: str | None = Field(default=None, min_length=11, max_length=14)


class LinkChanges(_Changes):
    """A link's kind or window, if still at `revision`."""

    revision: int = Field(ge=0)
    kind: Kind | None = None
    valid_from: AwareDatetime | None = None
    valid_until: AwareDatetime | None = None


class PersonChanges(_Changes):
    """A pending (or adjustments-requested) authorized person's data, if still at `version`."""

    version: int = Field(ge=0)
    name: str | None = Field(default=None, min_length=1, max_length=200)
    document: str | None = Field(default=None, max_length=64)
    kind: Kind | None = None
    valid_from: AwareDatetime | None = None
    valid_until: AwareDatetime | None = None
