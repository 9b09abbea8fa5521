"""The roster CSV: CPF check digits, columns, and one verdict per line."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from activities.pickup.roster_csv import CpfError, normalize_cpf, parse_roster
from shared.auth import school_for_key
from shared.settings import Settings


@pytest.mark.parametrize("raw", ["529.982.247-25", "52998224725", " 111.444.777-35 "])
def test_valid_cpfs_are_normalized_to_digits(raw):
    assert len(normalize_cpf(raw)) == 11


@pytest.mark.parametrize("raw", ["529.982.247-26", "111.111.111-11", "1234567890",
                                 "529a982b247c25", ""])
def test_malformed_cpfs_are_refused(raw):
    with pytest.raises(CpfError):
        normalize_cpf(raw)


def test_each_line_is_checked_on_its_own():
    text = ("student_registration,student_name,guardian_cpf,guardian_name,link_kind,valid_until\n"
            "A1,Ana,529.982.247-25,Maria,,\n"
            "A2,Bia,,Maria,,\n"
            "A3,Caio,529.982.247-25,Maria,temporary,\n"
            "A4,Duda,529.982.247-25,Maria,permanent,2030-01-01T00:00:00Z\n"
            "A5,Eva,529.982.247-25,Maria,temporary,2030-01-01T00:00:00\n"
            "\n"
            ",Fabi,,,,\n")
    lines, refused = parse_roster(text)
    assert [line.line for line in lines] == [2]
    assert [r.line for r in refused] == [3, 4, 5, 6, 8]


def test_an_unknown_column_refuses_the_header():
    lines, refused = parse_roster("student_registration,turma\nA1,3B\n")
    assert lines == [] and [r.line for r in refused] == [1]


def test_school_keys_are_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("ESTEIRA_PICKUP__SCHOOL_KEYS", '{"3": "k-three", "4": "k-four"}')
    keys = Settings().pickup.school_keys
    assert school_for_key("k-four", keys) == 4
    assert school_for_key("k-fou", keys) is None
    assert school_for_key("k-three", {3: SecretStr("")}) is None


def test_an_unreadable_file_is_refused_not_raised():
    lines, refused = parse_roster("student_registration,student_name\nA1,Ana\0\n")
    assert lines == [] and refused[0].reason == "caractere NUL na linha"
    lines, refused = parse_roster("student_registration,student_name\nA1," + "x" * 200_000)
    assert lines == [] and refused[0].reason.startswith("CSV ilegível")
    _, refused = parse_roster("student_registration,valid_until\nA1,9999-12-31T23:59:59-03:00\n")
    assert [r.line for r in refused] == [2]
