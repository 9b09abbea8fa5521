"""Which names intake refuses, and which code a failed file step of a job carries."""

from __future__ import annotations

import errno

import pytest

from activities.signer.names import BIDI_CONTROLS, longest_derived_name, name_problem
from activities.signer.storage import StorageError, StorageTree, storage_failure


def test_the_longest_output_name_of_an_accepted_name_fits_255_bytes():
    for name in ("a" * 236 + ".pdf", "b" * 236, "c" * 236 + ".rem", "é" * 118 + ".xml"):
        assert name_problem(name) is None, name
        assert len(longest_derived_name(name).encode()) <= 255
    assert longest_derived_name("a.pdf") == "a.signed.pdf.enc.tmp"


@pytest.mark.parametrize("name", ["a" * 237 + ".pdf", "a" * 251 + ".pdf", "é" * 119 + ".pdf",
                                  "b" * 237])
def test_a_name_whose_output_would_pass_255_bytes_is_refused(name):
    assert "255-byte limit" in name_problem(name)


def test_every_bidi_control_is_refused():
    expected = {*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)),
                "\u200e", "\u200f", "\u061c"}
    assert expected == BIDI_CONTROLS
    for char in expected:
        assert "bidirectional" in name_problem(f"fatura{char}fdp.pdf"), hex(ord(char))


@pytest.mark.parametrize(("number", "code"), [
    (errno.ENAMETOOLONG, "output.name-too-long"),
    (errno.ENOSPC, "storage.full"),
    (errno.EDQUOT, "storage.full"),
    (errno.EIO, "storage.failed"),
])
def test_a_file_error_maps_to_the_jobs_own_code(number, code):
    assert storage_failure(OSError(number, "x"), "f").code == code


def test_promoting_to_a_name_the_filesystem_refuses_is_output_name_too_long(tmp_path):
    storage = StorageTree(tmp_path)
    storage.ensure()
    artifact = tmp_path / "processing" / "a.signed.pdf"
    artifact.write_bytes(b"signed")
    with pytest.raises(StorageError) as refused:
        storage.promote("job", artifact, "n" * 256 + ".signed.pdf")
    assert refused.value.code == "output.name-too-long"
    assert artifact.exists(), "nothing lost"
