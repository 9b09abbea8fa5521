"""The BSENC key of this deployment: passphrase from settings, salt file under data/keys."""

from __future__ import annotations

from pathlib import Path

from activities.signer.crypto.bsenc import derive_key, read_salt_file, write_salt_file
from shared.settings import Settings


def salt_path(settings: Settings) -> Path:
    """`data/keys/bsenc.salt`."""
    return settings.data_dir.resolve() / "keys" / "bsenc.salt"


def load_encryption_key(settings: Settings) -> bytes | None:
    """The derived key, or None when no passphrase is configured (creates the salt once)."""
    if settings.signing.encryption_passphrase is None:
        return None
    path = salt_path(settings)
    if path.exists():
        salt = read_salt_file(path)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        salt = write_salt_file(path)
    return derive_key(settings.signing.encryption_passphrase.get_secret_value(), salt)
