"""Input guards shared by the format modules."""

from pyhanko.pdf_utils.misc import PdfError

from .errors import ErrorCode, SignerCryptoError

# What pyHanko's PDF reader raises on malformed input besides its own PdfError. It walks the
# page tree recursively: a tree nested thousands deep exhausts Python's stack (RecursionError),
# which is the document's shape at fault, not the signing.
PDF_MALFORMED = (PdfError, KeyError, IndexError, TypeError, ValueError, AttributeError,
                 RecursionError)


def require_content(data: bytes, what: str) -> None:
    """Refuse empty input with a stable code before a library fails on it less clearly."""
    if not data:
        raise SignerCryptoError(ErrorCode.DOCUMENT_EMPTY, f"{what} is empty")
