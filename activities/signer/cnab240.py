"""CNAB240 (FEBRABAN) payment files: a fixed-width parser and the past-payment-date guard."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

RECORD_LENGTH = 240
SAO_PAULO = ZoneInfo("America/Sao_Paulo")
RECORD_TYPES = {"0": "file header", "1": "batch header", "3": "detail", "5": "batch trailer",
                "9": "file trailer"}
# 1-based inclusive positions of the payment date (DDMMAAAA) and the amount, per segment.
PAYMENT_DATE = {"A": (94, 101), "J": (145, 152), "N": (88, 95), "O": (100, 107)}
AMOUNT = {"A": (120, 134), "J": (153, 167), "N": (96, 110), "O": (108, 122)}
# Complementary segments carry no payment of their own.
KNOWN_SEGMENTS = frozenset("ABCJNOWZ")
INCLUSION = "0"


class Cnab240Error(Exception):
    """The file is not a CNAB240 file this host can read; `line_no` says where."""

    def __init__(self, line_no: int, message: str) -> None:
        super().__init__(f"line {line_no}: {message}")
        self.line_no = line_no
        self.message = f"line {line_no}: {message}"


@dataclass(frozen=True)
class Cnab240Record:
    """One record: its line, type, segment, movement, payment date and amount."""

    line_no: int
    record_type: str
    segment: str | None = None
    movement: str | None = None
    payment_date: date | None = None
    amount_cents: int | None = None
    # J-52 and friends: they describe a payment, they don't make one.
    complementary: bool = False

    @property
    def pays(self) -> bool:
        """A main segment (A, J, N, O) that includes a payment."""
        return (self.movement == INCLUSION and self.segment in PAYMENT_DATE
                and not self.complementary)


@dataclass(frozen=True)
class Cnab240File:
    """Every record of a payment file."""

    records: list[Cnab240Record]

    @property
    def earliest_payment(self) -> Cnab240Record | None:
        """The inclusion record with the earliest payment date (first such line on a tie)."""
        dated = [r for r in self.records if r.pays and r.payment_date is not None]
        return min(dated, key=lambda r: (r.payment_date, r.line_no)) if dated else None


def is_payment_file(file_name: str) -> bool:
    """CNAB240 remittances arrive as `.rem`."""
    return Path(file_name).suffix.lower() == ".rem"


def today_in_sao_paulo() -> date:
    """The calendar date the bank sees."""
    return datetime.now(SAO_PAULO).date()


Today = Callable[[], date]


def parse(data: bytes) -> Cnab240File:
    """Parse a whole file; Cnab240Error names the first line that is wrong."""
    lines = data.decode("latin-1").split("\n")
    if lines and lines[-1] in ("", "\x1a"):
        lines.pop()
    if not lines:
        raise Cnab240Error(1, "the file is empty")
    records = [_record(number, line.removesuffix("\r"))
               for number, line in enumerate(lines, start=1)]
    if records[0].record_type != "0":
        raise Cnab240Error(1, "the first record must be the file header (type 0)")
    if records[-1].record_type != "9":
        raise Cnab240Error(len(records), "the last record must be the file trailer (type 9)")
    return Cnab240File(records)


def passed_payment(parsed: Cnab240File, today: date) -> Cnab240Record | None:
    """The earliest inclusion whose payment date is before `today`, if any."""
    earliest = parsed.earliest_payment
    if earliest is not None and earliest.payment_date < today:
        return earliest
    return None


def _record(line_no: int, line: str) -> Cnab240Record:
    if len(line) != RECORD_LENGTH:
        raise Cnab240Error(line_no, f"record has {len(line)} characters, expected "
                                    f"{RECORD_LENGTH}")
    record_type = line[7]
    if record_type not in RECORD_TYPES:
        raise Cnab240Error(line_no, f"unknown record type {record_type!r} (position 8)")
    if record_type != "3":
        return Cnab240Record(line_no, record_type)
    segment, movement = line[13], line[14]
    if segment not in KNOWN_SEGMENTS:
        raise Cnab240Error(line_no, f"unknown detail segment {segment!r} (position 14)")
    if segment == "J" and line[17:19] == "52":
        # J-52 complements a J record (payer and beneficiary ids), it pays nothing itself.
        return Cnab240Record(line_no, record_type, segment, movement, complementary=True)
    payment_date = _date(_field(line, PAYMENT_DATE[segment])) if segment in PAYMENT_DATE \
        else None
    amount = _field(line, AMOUNT[segment]) if segment in AMOUNT else ""
    return Cnab240Record(line_no, record_type, segment, movement, payment_date,
                         int(amount) if amount.isdigit() else None)


def _field(line: str, span: tuple[int, int]) -> str:
    return line[span[0] - 1:span[1]]


def _date(raw: str) -> date | None:
    # Zeros mean "no date"; a date that isn't one is "no date" too, not an error (the bank
    # judges the rest of the file).
    if not raw.isdigit() or raw == "00000000":
        return None
    try:
        return date(int(raw[4:]), int(raw[2:4]), int(raw[:2]))
    except ValueError:
        return None
