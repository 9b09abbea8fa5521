"""The API key: where it comes from, how it is generated, how it is compared."""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from pathlib import Path

from pydantic import SecretStr

from shared.private_files import write_private
from shared.settings import Settings

API_KEY_HEADER = "X-API-Key"


class MissingApiKeyError(Exception):
    """No API key is configured where one is required."""


def resolve_api_key(settings: Settings) -> str:
    """`ESTEIRA_API_KEY`, else the key `esteira dev` generated into `data/api-key`."""
    if settings.api_key is not None and settings.api_key.get_secret_value():
        return settings.api_key.get_secret_value()
    if settings.api_key_file.is_file():
        key = settings.api_key_file.read_text().strip()
        if key:
            return key
    raise MissingApiKeyError(
        "No API key configured: set ESTEIRA_API_KEY (or run `esteira dev`, which generates "
        f"one into {settings.api_key_file})."
    )


def ensure_generated_api_key(path: Path) -> bool:
    """Create a random key at `path` (mode 0600) unless one exists; True if created."""
    if path.is_file() and path.read_text().strip():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, (secrets.token_urlsafe(32) + "\n").encode())
    return True


def school_for_key(presented: str, school_keys: Mapping[int, SecretStr]) -> int | None:
    """The school whose scoped key this is, or None; every key is compared, in constant time."""
    found = None
    for school_id, key in school_keys.items():
        secret = key.get_secret_value()
        if secret and keys_match(presented, secret):
            found = school_id
    return found


def keys_match(presented: str | None, expected: str) -> bool:
    """Constant-time comparison, so response timing reveals nothing about the key."""
    if presented is None:
        return False
    return hmac.compare_digest(presented.encode(), expected.encode())
