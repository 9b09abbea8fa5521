"""CNAB240 parsing and the past-payment-date guard: positions, line numbers, no dates."""

from __future__ import annotations

from datetime import date

import pytest

from activities.signer import cnab240
from activities.signer.crypto.samples import make_remittance

TODAY = date(2030, 1, 10)


def test_each_segment_reads_its_own_payment_date_positions():
    data = make_remittance(payments=[("A", "15012030", "0"), ("J", "11012030", "0"),
                                     ("N", "12012030", "0"), ("O", "13012030", "0"),
                                     ("B", "", "0")])
    parsed = cnab240.parse(data)
    dates = {r.segment: r.payment_date for r in parsed.records if r.record_type == "3"}
    assert dates == {"A": date(2030, 1, 15), "J": date(2030, 1, 11), "N": date(2030, 1, 12),
                     "O": date(2030, 1, 13), "B": None}
    assert parsed.earliest_payment.line_no == 4 and parsed.earliest_payment.segment == "J"
    assert cnab240.passed_payment(parsed, TODAY) is None


def test_the_earliest_inclusion_before_today_is_reported_with_its_line():
    data = make_remittance(payments=[("A", "20012030", "0"), ("A", "05012030", "9"),
                                     ("A", "09012030", "0"), ("O", "08012030", "0")])
    passed = cnab240.passed_payment(cnab240.parse(data), TODAY)
    # The exclusion (movement 9) on line 4 is older but pays nothing.
    assert (passed.line_no, passed.payment_date) == (6, date(2030, 1, 8))


@pytest.mark.parametrize("raw", ["00000000", "31022030", "  1 2030"])
def test_zero_or_impossible_dates_mean_no_date(raw):
    parsed = cnab240.parse(make_remittance(payments=[("A", raw, "0")]))
    assert parsed.earliest_payment is None
    assert cnab240.passed_payment(parsed, TODAY) is None


def test_j52_complements_a_j_record_and_pays_nothing():
    line = list(cnab240.parse(make_remittance(payments=[("J", "01012020", "0")])).records)
    data = make_remittance(payments=[("J", "01012020", "0")]).decode("ascii").split("\r\n")
    data[2] = data[2][:17] + "52" + data[2][19:]
    parsed = cnab240.parse("\r\n".join(data).encode("ascii"))
    assert line[2].pays and not parsed.records[2].pays
    assert cnab240.passed_payment(parsed, TODAY) is None


def _lines() -> list[str]:
    return make_remittance(records=6).decode("ascii").split("\r\n")[:-1]


def test_a_short_line_fails_with_its_number():
    lines = _lines()
    lines[3] = lines[3][:200]
    with pytest.raises(cnab240.Cnab240Error) as caught:
        cnab240.parse("\n".join(lines).encode("ascii"))
    assert caught.value.line_no == 4
    assert caught.value.message == "line 4: record has 200 characters, expected 240"


def test_an_unknown_record_type_or_segment_fails_with_its_number():
    lines = _lines()
    lines[2] = lines[2][:7] + "7" + lines[2][8:]
    with pytest.raises(cnab240.Cnab240Error, match="line 3: unknown record type '7'"):
        cnab240.parse("\r\n".join(lines).encode("ascii"))
    lines = _lines()
    lines[3] = lines[3][:13] + "Q" + lines[3][14:]
    with pytest.raises(cnab240.Cnab240Error, match="line 4: unknown detail segment 'Q'"):
        cnab240.parse("\r\n".join(lines).encode("ascii"))


def test_a_file_must_open_with_a_header_and_close_with_a_trailer():
    lines = _lines()
    with pytest.raises(cnab240.Cnab240Error, match="line 5: the last record"):
        cnab240.parse("\r\n".join(lines[:-1]).encode("ascii"))
    with pytest.raises(cnab240.Cnab240Error, match="line 1: the first record"):
        cnab240.parse("\r\n".join(lines[1:]).encode("ascii"))
    with pytest.raises(cnab240.Cnab240Error, match="line 1: the file is empty"):
        cnab240.parse(b"")


def test_only_rem_files_are_payment_files():
    assert cnab240.is_payment_file("FOLHA.REM") and not cnab240.is_payment_file("folha.pdf")
