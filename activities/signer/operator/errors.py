"""The refusal operator operations raise: a code of the signer's table, a message."""

from __future__ import annotations

from shared.contracts.signer import SignerErrorCode
from shared.contracts.signer_errors import signer_error
from shared.errors import EsteiraError


def refuse(code: SignerErrorCode, message: str) -> EsteiraError:
    """An EsteiraError refused as `shared/contracts/signer_errors.py` says for `code`."""
    return signer_error(code, message)
