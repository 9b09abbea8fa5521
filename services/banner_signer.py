"""The signer's part of the startup banner: certificate source, encryption, readiness, profiles."""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from activities.signer.operator.folders import unconfigured_folder
from activities.signer.operator.health import is_keyless, recorded_health, salt_exists
from activities.signer.operator.policies import describe_level, describe_policy
from activities.signer.operator.profiles_admin import list_profiles
from services.banner import render
from services.readiness.signer import NO_PROFILE
from services.readiness.workers import worker_probes
from shared.readiness import evaluate
from shared.settings import Settings
from shared.temporal import connect

log = logging.getLogger("esteira.banner")
CONNECT_TIMEOUT_SECONDS = 5.0


async def signer_rows_and_panel(settings: Settings, sessions: async_sessionmaker[AsyncSession]
                                ) -> tuple[list[tuple[str, str]], str]:
    """Rows for the ready banner and the "Signing profiles" panel (WARN/FAIL lines logged).

    Profiles show what a worker found when it opened their keys: nothing is opened here.
    """
    profiles = await list_profiles(sessions)
    panel_rows: list[tuple[str, str]] = []
    sources, folder_notes = [], []
    for profile in profiles:
        ok, detail = await recorded_health(profile, sessions)
        # KEYLESS: the detail is `cert=none (approvers sign)`; nothing was opened for it.
        state = f"KEYLESS · {detail}" if is_keyless(profile) else "ok" if ok else "DEGRADED ·"
        folder = profile.input_folder or "none (uploads only)"
        flags = [f"format={profile.format}", f"folder={folder}",
                 f"verify={'on' if profile.verify else 'OFF'}",
                 f"validate-cert={'on' if profile.validate_certificate else 'OFF'}",
                 f"encrypt={'on' if profile.encrypt else 'off'}",
                 f"policy={describe_policy(profile)}",
                 f"level={describe_level(profile.signature_level, profile.timestamp)}",
                 "enabled" if profile.enabled else "DISABLED"]
        panel_rows.append((profile.name, f"{state} {' '.join(flags)}"))
        if profile.enabled and not ok:
            log.critical("FAIL signing profile %s: %s", profile.name, detail)
        if not profile.verify:
            log.warning("WARN signing profile %s has Verify=false: outputs are not verified",
                        profile.name)
        if not profile.validate_certificate:
            log.warning("WARN signing profile %s has ValidateCertificate=false", profile.name)
        if (stale := unconfigured_folder(profile, settings)) is not None:
            folder_notes.append(f"\nWARN {stale}")
            log.warning("WARN %s", stale)
        dev = " [DEV certificate, NOT FOR PRODUCTION]" if profile.is_dev else ""
        sources.append(f"{profile.name}: {detail}{dev}")
    encryption = ("enabled (BSENC v1, salt loaded)" if settings.signing.encryption_passphrase
                  and salt_exists(settings) else
                  "enabled (BSENC v1, salt created on first use)"
                  if settings.signing.encryption_passphrase else "disabled")
    signing = ("ready" if any(p.enabled for p in profiles) else
               f"NOT READY ({NO_PROFILE}): no signing profile configured; nothing is signed")
    # What each profile's signatures declare, never a blanket claim (`none`: no policy).
    policies = "; ".join(f"{p.name}: {describe_policy(p)}" for p in profiles)
    levels = "; ".join(f"{p.name}: {describe_level(p.signature_level, p.timestamp)}"
                       for p in profiles)
    rows = [("cert source", "; ".join(sources) or "none (no signing profiles)"),
            ("signing policy", policies or "none (no signing profiles)"),
            ("signature level", levels or "none (no signing profiles)"),
            ("encryption", encryption), ("signing", signing),
            ("workers", await workers_row(settings, sessions))]
    panel = render("Signing profiles", panel_rows or [("(none)", "")])
    return rows, panel + "".join(folder_notes)


async def workers_row(settings: Settings, sessions: async_sessionmaker[AsyncSession]) -> str:
    """The readiness of the workers, as /api/ready judges it, with the failing lines named."""
    if not settings.readiness.worker_domains:
        return "not required (Readiness:WorkerDomains is empty)"
    client: Client | None = None
    lock = asyncio.Lock()

    async def temporal() -> Client:
        nonlocal client
        async with lock:
            if client is None:
                client = await asyncio.wait_for(connect(settings), CONNECT_TIMEOUT_SECONDS)
        return client

    verdict = await evaluate(worker_probes(settings, sessions, temporal))
    failing = [c for c in verdict.checks if not c.ok]
    if not failing:
        return f"ready: {', '.join(settings.readiness.worker_domains)} polled"
    return "NOT READY: " + "; ".join(f"{c.name} ({c.detail})" for c in failing)
