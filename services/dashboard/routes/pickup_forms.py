"""Reading the pickup administration's forms: each field checked as the REST schemas check it,
a bad one refused with a message that names it (422 `request.invalid`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from fastapi import Request
from starlette.datastructures import FormData

from activities.pickup.contracts.board import Kind
from activities.pickup.contracts.schools import DAY_START_PATTERN, MAX_TIMEOUT_MINUTES, iana_zone
from shared.errors import ErrorCode, EsteiraError
from shared.web_urls import web_url

# The dashboard's record lists show this many rows a page ("Next page" for the rest).
PAGE_SIZE = 50
# A Control iD card `value` is a uint64; the store keeps a signed 64-bit integer.
MAX_CARD_VALUE = 2**63 - 1
MAX_TEXT = 200


def invalid(message: str) -> EsteiraError:
    """The refusal of a form field."""
    return EsteiraError(ErrorCode.REQUEST_INVALID, message)


def text(form: FormData, name: str, label: str, *, required: bool = False,
         limit: int = MAX_TEXT) -> str | None:
    """A trimmed text field; empty is None (or refused when `required`)."""
    value = str(form.get(name) or "").strip()
    if not value:
        if required:
            raise invalid(f"{label} is required.")
        return None
    if len(value) > limit:
        raise invalid(f"{label} is at most {limit} characters.")
    return value


def number(form: FormData, name: str, label: str, *, required: bool = False,
           maximum: int = MAX_CARD_VALUE) -> int | None:
    """A positive whole number (an id, a card value)."""
    value = text(form, name, label, required=required)
    if value is None:
        return None
    if not value.isdigit() or not 1 <= int(value) <= maximum:
        raise invalid(f"{label} must be a whole number from 1 to {maximum}.")
    return int(value)


def ident(form: FormData, name: str, label: str) -> int:
    """A record's id the operator typed or the page carried (required)."""
    value = number(form, name, label, required=True)
    assert value is not None  # required: refused above when blank
    return value


def version(form: FormData) -> int:
    """The version the page showed (a CAS: the change is refused if it moved since)."""
    value = str(form.get("version") or "")
    if not value.isdigit():
        raise invalid("The record's version is missing.")
    return int(value)


def kind(form: FormData) -> Kind:
    """permanent / temporary."""
    value = str(form.get("kind") or Kind.PERMANENT)
    if value not in {k.value for k in Kind}:
        raise invalid(f"Kind must be one of {', '.join(k.value for k in Kind)}.")
    return Kind(value)


def moment(form: FormData, name: str, label: str, zone: str) -> datetime | None:
    """A `datetime-local` field ("YYYY-MM-DDTHH:MM"), read in the school's time zone."""
    value = text(form, name, label)
    if value is None:
        return None
    try:
        local = datetime.fromisoformat(value)
    except ValueError:
        raise invalid(f"{label} must be a date and time (YYYY-MM-DDTHH:MM).") from None
    if local.tzinfo is None:
        local = local.replace(tzinfo=ZoneInfo(zone))
    return local.astimezone(UTC)


def school_fields(form: FormData) -> dict[str, Any]:
    """A school's settings as the form gives them (blank ones left out)."""
    fields: dict[str, Any] = {}
    name = text(form, "name", "Name")
    if name is not None:
        fields["name"] = name
    zone = text(form, "time_zone", "Time zone", limit=64)
    if zone is not None:
        try:
            fields["time_zone"] = iana_zone(zone)
        except ValueError as exc:
            raise invalid(f"Time zone: {exc}.") from None
    start = text(form, "day_start", "Day start", limit=5)
    if start is not None:
        if not re.match(DAY_START_PATTERN, start):
            raise invalid("Day start must be HH:MM (00:00 to 23:59).")
        fields["day_start"] = start
    timeout = text(form, "arrival_timeout_minutes", "Arrival timeout", limit=16)
    if timeout is not None:
        try:
            minutes = float(timeout)
        except ValueError:
            minutes = -1.0
        if not 0 < minutes <= MAX_TIMEOUT_MINUTES:
            raise invalid(f"Arrival timeout must be minutes above 0, at most "
                          f"{MAX_TIMEOUT_MINUTES}.")
        fields["arrival_timeout_minutes"] = minutes
    url = text(form, "turnstile_url", "Turnstile URL", limit=500)
    if url is not None:
        try:
            fields["turnstile_url"] = web_url(url)
        except ValueError as exc:
            raise invalid(f"Turnstile URL {exc}.") from None
    return fields


def credential(form: FormData) -> tuple[int | None, str | None]:
    """A card value and / or a QR code; at least one."""
    card = number(form, "card_value", "Card number")
    qr = text(form, "qr_value", "QR code")
    if card is None and qr is None:
        raise invalid("Give a card number or a QR code.")
    return card, qr


def cursor_of(request: Request) -> str | None:
    """The page the list continues from."""
    return request.query_params.get("cursor") or None

