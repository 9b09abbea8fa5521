"""A school's day as the settings and the API both check it: its start, its zone, timeouts."""

from __future__ import annotations

from functools import cache
from zoneinfo import available_timezones

# Defaults of a new school's day: the columns `pickup_schools.time_zone` / `day_start`.
DEFAULT_DAY_TIME_ZONE = "America/Sao_Paulo"
DEFAULT_DAY_START = "00:00"
DAY_START_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"
# The longest READY or arrival timeout accepted (a school day); beyond it a deadline
# overflows or means nothing.
MAX_TIMEOUT_MINUTES = 24 * 60
# Files in the zone database that are not places: the host's own zone (whatever it is
# configured to), tzdata's "Factory" placeholder (abbreviation "-00") and the POSIX rule file.
NOT_ZONES = frozenset({"localtime", "Factory", "posixrules"})


@cache
def _iana_zones() -> frozenset[str]:
    return frozenset(available_timezones()) - NOT_ZONES


def iana_zone(value: str) -> str:
    """`value` if it names an IANA time zone (`America/Sao_Paulo`, `UTC`); else ValueError."""
    if value not in _iana_zones():
        raise ValueError(f"unknown time zone {value!r} (an IANA name like America/Sao_Paulo)")
    return value
