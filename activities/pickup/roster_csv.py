"""The roster CSV: its columns, CPF validation, and one checked line per data row."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import UTC, datetime

from activities.pickup.contracts.board import Kind

COLUMNS = ("student_registration", "student_name", "guardian_cpf", "guardian_name",
           "guardian_contact", "link_kind", "valid_from", "valid_until", "student_card_value",
           "student_qr_value")
GUARDIAN_COLUMNS = ("guardian_name", "guardian_contact", "link_kind", "valid_from",
                    "valid_until")
# A Control iD card `value` is a uint64; the store keeps a signed 64-bit integer.
MAX_CARD_VALUE = 2**63 - 1
REQUIRED = ("student_registration",)
MAX_LINES = 20_000


class CpfError(ValueError):
    """Not a valid CPF."""


def normalize_cpf(raw: str) -> str:
    """The 11 digits of a CPF (dots and dash allowed), check digits verified."""
    digits = "".join(ch for ch in raw if ch.isdigit())
    if len(digits) != 11 or len(set(digits)) == 1 or any(
            ch not in "0123456789.- " for ch in raw.strip()):
        raise CpfError(f"CPF inválido: {raw!r}")
    for size in (9, 10):
        total = sum(int(d) * w for d, w in zip(digits[:size], range(size + 1, 1, -1),
                                                strict=True))
        check = (total * 10) % 11 % 10
        if check != int(digits[size]):
            raise CpfError(f"CPF inválido: {raw!r}")
    return digits


@dataclass(frozen=True)
class RosterLine:
    """One data row, checked: a student, optionally a guardian and their link."""

    line: int
    registration: str
    student_name: str | None
    cpf: str | None
    guardian_name: str | None
    contact: str | None
    kind: Kind
    valid_from: datetime | None
    valid_until: datetime | None
    # The student's own badge (its READY exit credential); None leaves it as it is.
    card_value: int | None = None
    qr_value: str | None = None


@dataclass(frozen=True)
class Refused:
    """A row that can't be applied, and why (line 1 is the header)."""

    line: int
    reason: str


def _moment(raw: str, column: str) -> datetime | None:
    if not raw:
        return None
    moment = datetime.fromisoformat(raw)
    if moment.tzinfo is None:
        raise ValueError(f"{column} precisa de fuso horário (ISO 8601 com offset)")
    # Stored in UTC: SQLite keeps the wall time only.
    return moment.astimezone(UTC)


def _check(line: int, row: dict[str, str]) -> RosterLine:
    cell = {name: (row.get(name) or "").strip() for name in COLUMNS}
    if any("\0" in value for value in cell.values()):
        raise ValueError("caractere NUL na linha")
    if not cell["student_registration"]:
        raise ValueError("student_registration vazio")
    cpf = normalize_cpf(cell["guardian_cpf"]) if cell["guardian_cpf"] else None
    if cpf is None and any(cell[c] for c in GUARDIAN_COLUMNS):
        raise ValueError("colunas de responsável sem guardian_cpf")
    try:
        kind = Kind(cell["link_kind"] or Kind.PERMANENT)
    except ValueError:
        raise ValueError(f"link_kind inválido: {cell['link_kind']!r}") from None
    try:
        valid_from = _moment(cell["valid_from"], "valid_from")
        valid_until = _moment(cell["valid_until"], "valid_until")
    except ValueError as exc:
        raise ValueError(f"data inválida: {exc}") from None
    if kind == Kind.PERMANENT and (valid_from or valid_until):
        raise ValueError("vínculo permanente não tem datas")
    if kind == Kind.TEMPORARY and (valid_until is None
                                   or (valid_from is not None and valid_from >= valid_until)):
        raise ValueError("vínculo temporário precisa de valid_until depois de valid_from")
    for name, limit in (("student_registration", 64), ("student_name", 200),
                        ("guardian_name", 200), ("guardian_contact", 200),
                        ("student_qr_value", 200)):
        if len(cell[name]) > limit:
            raise ValueError(f"{name} passa de {limit} caracteres")
    card = cell["student_card_value"]
    if card and not (card.isascii() and card.isdigit() and 1 <= int(card) <= MAX_CARD_VALUE):
        raise ValueError(f"student_card_value inválido: {card!r} (1 a {MAX_CARD_VALUE})")
    return RosterLine(line=line, registration=cell["student_registration"],
                      student_name=cell["student_name"] or None, cpf=cpf,
                      guardian_name=cell["guardian_name"] or None,
                      contact=cell["guardian_contact"] or None, kind=kind,
                      valid_from=valid_from, valid_until=valid_until,
                      card_value=int(card) if card else None,
                      qr_value=cell["student_qr_value"] or None)


def parse_roster(text: str) -> tuple[list[RosterLine], list[Refused]]:
    """Checked rows and refused ones; `,` or `;` separated, header first."""
    header = text.lstrip("\ufeff").splitlines()[0] if text.strip() else ""
    delimiter = ";" if header.count(";") > header.count(",") else ","
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")), delimiter=delimiter)
    try:
        columns = [name.strip() for name in reader.fieldnames or ()]
    except csv.Error as exc:
        return [], [Refused(1, f"CSV ilegível: {exc}")]
    unknown = sorted(set(columns) - set(COLUMNS))
    missing = [name for name in REQUIRED if name not in columns]
    if unknown or missing:
        return [], [Refused(1, f"cabeçalho: colunas desconhecidas {unknown}, "
                               f"faltando {missing}; esperado {list(COLUMNS)}")]
    reader.fieldnames = columns
    lines: list[RosterLine] = []
    refused: list[Refused] = []
    try:
        _read(reader, lines, refused)
    except csv.Error as exc:  # a NUL byte, an unterminated quote: the file stops there
        refused.append(Refused(reader.line_num, f"CSV ilegível: {exc}"))
    return lines, refused


def _read(reader: csv.DictReader, lines: list[RosterLine], refused: list[Refused]) -> None:
    for row in reader:
        if reader.line_num > MAX_LINES + 1:
            refused.append(Refused(reader.line_num, f"mais de {MAX_LINES} linhas"))
            break
        if None in row:
            refused.append(Refused(reader.line_num, "colunas a mais na linha"))
            continue
        if not any((value or "").strip() for value in row.values()):
            continue  # a blank line
        try:
            lines.append(_check(reader.line_num, row))
        except (ValueError, OverflowError) as exc:
            refused.append(Refused(reader.line_num, str(exc)))
