"""The fast hex-string reader returns exactly what pyHanko's own reader returns."""

from io import BytesIO

import pytest
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.misc import PdfStreamError

from activities.signer.crypto import _pyhanko_speedups as speedups
from activities.signer.crypto.verify import verify_pades


@pytest.mark.parametrize(
    "raw",
    [
        b"<48656C6C6F> rest",
        b"<4 8 6\n5\t6C 6c6F>rest",
        b"<486>",
        b"<>",
        b"<FEFF00410042> trailing",
        b"<" + b"30" * 40_000 + b"> big",  # longer than one read chunk
    ],
    ids=["plain", "whitespace", "odd", "empty", "utf16-bom", "multi-chunk"],
)
def test_same_value_and_position_as_pyhanko(raw):
    ours, stock = BytesIO(raw), BytesIO(raw)
    assert speedups.read_hex_string_from_stream(ours) == speedups._stock_reader(stock)
    assert ours.tell() == stock.tell()


@pytest.mark.parametrize("raw", [b"<48 % note\n65>", b"<48zz>", b"<4865"])
def test_unusual_or_bad_input_defers_to_pyhanko(raw):
    try:
        expected = speedups._stock_reader(BytesIO(raw))
    except PdfStreamError:
        with pytest.raises(PdfStreamError):
            speedups.read_hex_string_from_stream(BytesIO(raw))
    else:
        assert speedups.read_hex_string_from_stream(BytesIO(raw)) == expected


def test_verification_installs_fast_reader(sample_pdf):
    verify_pades(sample_pdf, trust_roots=[])
    assert generic.read_hex_string_from_stream is speedups.read_hex_string_from_stream
