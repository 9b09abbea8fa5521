"""DEGRADED reasons of the Lacuna Signer methods: no CPF, no `Signer:*`, a folder gone."""

from __future__ import annotations

import asyncio
import dataclasses

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.contracts.lacuna import ProfileMethod
from activities.signer.health import ProfileHealth
from activities.signer.lacuna.methods import holder_cpf
from activities.signer.models.jobs import SigningProfile
from activities.signer.models.lacuna import SignerFolderScan
from shared.settings import Settings


async def method_health(health: ProfileHealth, profile: SigningProfile,
                        settings: Settings) -> ProfileHealth:
    """The certificate's health, degraded further by what the profile's method needs."""
    if not health.ok or profile.method == ProfileMethod.LOCAL:
        return health
    reason = None
    if not settings.signer.configured:
        reason = (f"DEGRADED: method {profile.method} needs the Signer:* settings "
                  "(Signer:Url and Signer:ApiKey), which this host does not have")
    elif profile.method == ProfileMethod.SIGNER_FOLDER:
        if await asyncio.to_thread(holder_cpf, profile) is None:
            reason = ("DEGRADED: the certificate opened but carries no CPF; use an e-CPF or "
                      "e-CNPJ certificate and restart, or take the profile off SignerFolder")
        elif not profile.signer_folder_id:
            reason = "DEGRADED: no Signer folder is bound to this SignerFolder profile"
    return dataclasses.replace(health, ok=False, detail=reason) if reason else health


async def folder_gone(profile: SigningProfile,
                      sessions: async_sessionmaker[AsyncSession]) -> str | None:
    """The last scan's finding that the bound Signer folder no longer exists (None if not)."""
    if profile.method != ProfileMethod.SIGNER_FOLDER or not profile.signer_folder_id:
        return None
    async with sessions() as session:
        scan = await session.get(SignerFolderScan, profile.name)
    # A scan of a folder that is no longer bound says nothing: binding another fixes it.
    if scan is None or scan.ok or scan.folder_id != profile.signer_folder_id:
        return None
    return f"DEGRADED: {scan.detail}"
