"""Request bodies for grant credentials: a card number and/or a QR value."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict, Field, model_validator

from shared.wire import WireModel

# A Control iD card `value` is a uint64; the store keeps a signed 64-bit integer.
CardValue = Annotated[int, Field(ge=1, lt=2**63)]
QrValue = Annotated[str, Field(min_length=1, max_length=200)]


class Body(WireModel):
    """A request body: camelCase (snake_case read too), nothing else accepted."""

    model_config = ConfigDict(extra="forbid")


class PersonCredential(Body):
    """An authorized person's card and/or QR code (at the student's school)."""

    card_value: CardValue | None = None
    qr_value: QrValue | None = None

    @model_validator(mode="after")
    def _something(self) -> PersonCredential:
        if self.card_value is None and self.qr_value is None:
            raise ValueError("give cardValue, qrValue or both")
        return self


class GuardianCredential(PersonCredential):
    """A guardian's card and/or QR code at one school."""

    school_id: int


class StudentCredential(PersonCredential):
    """A student's own card and/or QR code (at its school): its READY exit credential."""
