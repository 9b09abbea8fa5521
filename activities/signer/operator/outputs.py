"""Encrypted outputs (BSENC v1): whether this deployment encrypts, and `esteira decrypt`."""

from __future__ import annotations

from pathlib import Path

from activities.signer.crypto.bsenc import BsencCipher
from activities.signer.crypto.errors import SignerCryptoError
from activities.signer.encryption import load_encryption_key, salt_path
from shared.settings import Settings


class DecryptFailed(Exception):
    """The file is not ours, is damaged, or the key is another one."""


class SignerOutputs:
    """The deployment's output encryption."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    @property
    def encryption_configured(self) -> bool:
        """Whether a passphrase is configured (`Signing:EncryptionPassphrase`)."""
        return self._settings.signing.encryption_passphrase is not None

    def salt_exists(self) -> bool:
        """Whether the encryption salt was created already (it is, on first use)."""
        return salt_path(self._settings).exists()

    def decrypt(self, source: Path, target: Path) -> None:
        """Decrypt `source` into `target` with this deployment's key (OSError propagates)."""
        key = load_encryption_key(self._settings)
        if key is None:
            raise DecryptFailed("no encryption passphrase is configured")
        try:
            BsencCipher(key).decrypt_file(source, target)
        except SignerCryptoError as exc:
            raise DecryptFailed(str(exc)) from None
