"""The signer's part of the startup banner: certificate source, encryption, profiles panel."""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.encryption import salt_path
from activities.signer.health import check_profile
from activities.signer.lacuna.health import method_health
from services.banner import render
from shared.db.signer_models import SigningProfile
from shared.settings import Settings

log = logging.getLogger("esteira.banner")


async def signer_rows_and_panel(settings: Settings, sessions: async_sessionmaker[AsyncSession]
                                ) -> tuple[list[tuple[str, str]], str]:
    """Rows for the ready banner and the "Signing profiles" panel (WARN/FAIL lines logged)."""
    async with sessions() as session:
        profiles = (await session.exec(select(SigningProfile).order_by(SigningProfile.name))).all()
    panel_rows: list[tuple[str, str]] = []
    sources = []
    for profile in profiles:
        health = await method_health(await check_profile(profile), profile, settings)
        state = "ok" if health.ok else "DEGRADED ·"
        folder = profile.input_folder or "none (uploads only)"
        flags = [f"format={profile.format}", f"folder={folder}",
                 f"verify={'on' if profile.verify else 'OFF'}",
                 f"validate-cert={'on' if profile.validate_certificate else 'OFF'}",
                 f"encrypt={'on' if profile.encrypt else 'off'}",
                 "enabled" if profile.enabled else "DISABLED"]
        panel_rows.append((profile.name, f"{state} {' '.join(flags)}"))
        if not health.ok:
            log.critical("FAIL signing profile %s: %s", profile.name, health.detail)
        if not profile.verify:
            log.warning("WARN signing profile %s has Verify=false: outputs are not verified",
                        profile.name)
        if not profile.validate_certificate:
            log.warning("WARN signing profile %s has ValidateCertificate=false", profile.name)
        dev = " [DEV certificate, NOT FOR PRODUCTION]" if profile.is_dev else ""
        sources.append(f"{profile.name}: {health.detail}{dev}")
    encryption = ("enabled (BSENC v1, salt loaded)" if settings.signing.encryption_passphrase
                  and salt_path(settings).exists() else
                  "enabled (BSENC v1, salt created on first use)"
                  if settings.signing.encryption_passphrase else "disabled")
    rows = [("cert source", "; ".join(sources) or "none (no signing profiles)"),
            ("encryption", encryption)]
    return rows, render("Signing profiles", panel_rows or [("(none)", "")])
