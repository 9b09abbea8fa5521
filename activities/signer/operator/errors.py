"""The refusal operator operations raise: a code of the signer's table, a message."""

from __future__ import annotations

from activities.signer.contracts.errors import signer_error
from activities.signer.contracts.jobs import SignerErrorCode
from shared.errors import EsteiraError


def refuse(code: SignerErrorCode, message: str) -> EsteiraError:
    """An EsteiraError refused as `activities/signer/contracts/errors.py` says for `code`."""
    return signer_error(code, message)
