"""`esteira decrypt`: an encrypted output (BSENC v1) back to its signed file."""

from __future__ import annotations

from pathlib import Path

from activities.signer.crypto.bsenc import BsencCipher
from activities.signer.crypto.errors import SignerCryptoError
from activities.signer.encryption import load_encryption_key

__all__ = ["DecryptFailed", "decrypt_file", "load_encryption_key"]


class DecryptFailed(Exception):
    """The file is not ours, is damaged, or the key is another one."""


def decrypt_file(key: bytes, source: Path, target: Path) -> None:
    """Decrypt `source` into `target` (OSError propagates as it is)."""
    try:
        BsencCipher(key).decrypt_file(source, target)
    except SignerCryptoError as exc:
        raise DecryptFailed(str(exc)) from None
