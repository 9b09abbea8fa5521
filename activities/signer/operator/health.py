"""What doors show of a profile's health: what a worker found, never a key opened here."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.encryption import salt_path
from activities.signer.health_reporter import recorded_health
from activities.signer.lacuna.health import folder_gone
from activities.signer.profiles import is_keyless
from shared.db.signer_models import SigningProfile
from shared.settings import Settings

__all__ = ["folder_gone", "is_keyless", "profile_health", "recorded_health", "salt_exists"]


async def profile_health(profile: SigningProfile, sessions: async_sessionmaker[AsyncSession]
                         ) -> tuple[bool, str]:
    """A worker's last finding, failed too when the bound Signer folder is gone."""
    ok, detail = await recorded_health(profile, sessions)
    # Read on every call: binding another Signer folder clears it without a restart.
    if ok and (gone := await folder_gone(profile, sessions)):
        return False, gone
    return ok, detail


def salt_exists(settings: Settings) -> bool:
    """Whether the encryption salt was created already (it is, on first use)."""
    return salt_path(settings).exists()
