"""Who may sign in to the dashboard: configured operators, or the development default."""

from __future__ import annotations

import functools
import hmac
from dataclasses import dataclass

from services.dashboard.passwords import hash_password, verify_password
from shared.settings import Settings

DEV_OPERATOR = "operator"


@functools.cache
def _dummy_hash() -> str:
    """Checked when the name is unknown, so timing doesn't tell which names exist."""
    return hash_password("not-a-password", salt=b"0" * 16)


def banner_note(settings: Settings) -> str:
    """How operators sign in, for the startup banner (never a password)."""
    url = f"http://{settings.host}:{settings.ports.api}/"
    if settings.dashboard.operators:
        return f"{url} ({len(settings.dashboard.operators)} operator account(s))"
    if settings.environment == "Development":
        return f"{url} (operator '{DEV_OPERATOR}', password: the API key)"
    return f"{url} (sign-in disabled: no dashboard.operators; the API key still works)"


@dataclass(frozen=True)
class OperatorDirectory:
    """`dashboard.operators`; in Development with none configured, `operator` whose password
    is the API key (nothing new to print or to leak: the key is already masked in logs)."""

    hashes: dict[str, str]
    dev_password: str | None

    @classmethod
    def from_settings(cls, settings: Settings, api_key: str) -> OperatorDirectory:
        """Accounts from settings; the development default only when none are configured."""
        hashes = {op.name: op.password_hash.get_secret_value()
                  for op in settings.dashboard.operators}
        dev = api_key if not hashes and settings.environment == "Development" else None
        return cls(hashes, dev)

    @property
    def login_enabled(self) -> bool:
        """False in production with no operator configured: only the API key works."""
        return bool(self.hashes) or self.dev_password is not None

    def authenticate(self, name: str, password: str) -> str | None:
        """The operator's name when the password is right, else None."""
        if self.dev_password is not None and name == DEV_OPERATOR:
            ok = hmac.compare_digest(password.encode(), self.dev_password.encode())
            return name if ok else None
        encoded = self.hashes.get(name)
        ok = verify_password(password, encoded or _dummy_hash())
        return name if ok and encoded is not None else None
