"""Request bodies of the pickup API (camelCase; the snake_case names are read too)."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field, field_validator, model_validator

from activities.pickup.contracts.board import Kind
from activities.pickup.contracts.schools import DAY_START_PATTERN, MAX_TIMEOUT_MINUTES, iana_zone
from services.api.routes.pickup.credential_schemas import Body, CardValue, QrValue
from shared.web_urls import web_url


class NewSchool(Body):
    """A school; the arrival timeout defaults to `ESTEIRA_PICKUP__ARRIVAL_TIMEOUT_MINUTES`."""

    name: str = Field(min_length=1, max_length=200)
    arrival_timeout_minutes: float | None = Field(default=None, gt=0, le=MAX_TIMEOUT_MINUTES)
    turnstile_url: str | None = Field(default=None, max_length=500)
    # The school day; defaults `ESTEIRA_PICKUP__DAY_TIME_ZONE` / `…__DAY_START`.
    time_zone: str | None = Field(default=None, max_length=64)
    day_start: str | None = Field(default=None, pattern=DAY_START_PATTERN)

    # The worker calls this URL: a file:// (or any non-web scheme) must not get that far.
    _web_turnstile_url = field_validator("turnstile_url")(web_url)

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        return iana_zone(value) if value is not None else None


class NewStudent(Body):
    """A student, AT_SCHOOL at version 0."""

    school_id: int
    name: str = Field(min_length=1, max_length=200)
    # The school's own student number (the roster CSV's key).
    registration: str | None = Field(default=None, min_length=1, max_length=64)
    # The student's own badge: what opens the exit while READY.
    card_value: CardValue | None = None
    qr_value: QrValue | None = None


class NewGuardian(Body):
    """A guardian; a card / QR code needs the `school_id` it opens the turnstile of."""

    name: str = Field(min_length=1, max_length=200)
    contact: str | None = Field(default=None, max_length=200)
    cpf: str | None = Field(default=None, min_length=11, max_length=14)
    school_id: int | None = None
    card_value: CardValue | None = None
    qr_value: QrValue | None = None

    @model_validator(mode="after")
    def _credential_school(self) -> NewGuardian:
        if (self.card_value is not None or self.qr_value is not None) and self.school_id is None:
            raise ValueError("a cardValue or qrValue needs schoolId")
        return self


class NewLink(Body):
    """A student–guardian link; temporary ones need `valid_until`."""

    student_id: int
    guardian_id: int
    kind: Kind
    valid_from: AwareDatetime | None = None
    valid_until: AwareDatetime | None = None


class NewToken(Body):
    """An access token for the guardian app."""

    ttl_hours: float | None = Field(default=None, gt=0)


class NewAuthorizedPerson(Body):
    """Someone authorized to pick a student up."""

    student_id: int
    name: str = Field(min_length=1, max_length=200)
    document: str | None = Field(default=None, max_length=64)
    kind: Kind
    valid_from: AwareDatetime | None = None
    valid_until: AwareDatetime | None = None
    card_value: CardValue | None = None
    qr_value: QrValue | None = None


class NewEarlyRelease(Body):
    """A dated, single-use early release."""

    student_id: int
    valid_until: AwareDatetime
    reason: str | None = Field(default=None, max_length=500)


class Versioned(Body):
    """The version the caller saw; the change applies only if it is still current."""

    version: int = Field(ge=0)


class Arrivals(Body):
    """"I'm arriving" for some of the guardian's students."""

    student_ids: list[int] = Field(min_length=1, max_length=50)


class MonitorTarget(Body):
    """Where the controller should push its Monitor events (our public base URL)."""

    public_base_url: str = Field(min_length=1, max_length=500)

    _web_base_url = field_validator("public_base_url")(web_url)


PersonDecision = Literal["approve", "request-adjustments", "revoke"]
ReleaseDecision = Literal["approve", "request-adjustments", "use"]
