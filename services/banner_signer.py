"""The signer's part of the startup banner: certificate source, encryption, readiness, profiles."""

from __future__ import annotations

import asyncio
import logging

from temporalio.client import Client

from activities.signer.operator import SignerOperations
from services.banner import render
from services.readiness.signer import NO_PROFILE
from services.readiness.workers import worker_probes
from shared.db.engine import Sessions
from shared.readiness import evaluate
from shared.settings import Settings
from shared.temporal import TemporalHandle

log = logging.getLogger("esteira.banner")
CONNECT_TIMEOUT_SECONDS = 5.0


async def signer_rows_and_panel(signer: SignerOperations) -> tuple[list[tuple[str, str]], str]:
    """Rows for the ready banner and the "Signing profiles" panel (WARN/FAIL lines logged).

    Profiles show what a worker found when it opened their keys: nothing is opened here.
    """
    settings = signer.settings
    views = await signer.profiles.all()
    panel_rows: list[tuple[str, str]] = []
    sources, folder_notes = [], []
    for view in views:
        profile = view.row
        ok, detail = await signer.profiles.recorded_health(profile)
        # KEYLESS: the detail is `cert=none (approvers sign)`; nothing was opened for it.
        state = f"KEYLESS · {detail}" if view.keyless else "ok" if ok else "DEGRADED ·"
        folder = profile.input_folder or "none (uploads only)"
        flags = [f"format={profile.format}", f"folder={folder}",
                 f"verify={'on' if profile.verify else 'OFF'}",
                 f"validate-cert={'on' if profile.validate_certificate else 'OFF'}",
                 f"encrypt={'on' if profile.encrypt else 'off'}",
                 f"policy={view.effective_policy}",
                 f"level={view.effective_level}",
                 "enabled" if profile.enabled else "DISABLED"]
        panel_rows.append((profile.name, f"{state} {' '.join(flags)}"))
        if profile.enabled and not ok:
            log.critical("FAIL signing profile %s: %s", profile.name, detail)
        if not profile.verify:
            log.warning("WARN signing profile %s has Verify=false: outputs are not verified",
                        profile.name)
        if not profile.validate_certificate:
            log.warning("WARN signing profile %s has ValidateCertificate=false", profile.name)
        if (stale := signer.folders.unconfigured(profile)) is not None:
            folder_notes.append(f"\nWARN {stale}")
            log.warning("WARN %s", stale)
        dev = " [DEV certificate, NOT FOR PRODUCTION]" if profile.is_dev else ""
        sources.append(f"{profile.name}: {detail}{dev}")
    outputs = signer.outputs
    encryption = ("enabled (BSENC v1, salt loaded)" if outputs.encryption_configured
                  and outputs.salt_exists() else
                  "enabled (BSENC v1, salt created on first use)"
                  if outputs.encryption_configured else "disabled")
    signing = ("ready" if any(v.row.enabled for v in views) else
               f"NOT READY ({NO_PROFILE}): no signing profile configured; nothing is signed")
    # What each profile's signatures declare, never a blanket claim (`none`: no policy).
    policies = "; ".join(f"{v.row.name}: {v.effective_policy}" for v in views)
    levels = "; ".join(f"{v.row.name}: {v.effective_level}" for v in views)
    rows = [("cert source", "; ".join(sources) or "none (no signing profiles)"),
            ("signing policy", policies or "none (no signing profiles)"),
            ("signature level", levels or "none (no signing profiles)"),
            ("encryption", encryption), ("signing", signing),
            ("workers", await workers_row(settings, signer.sessions, signer.temporal))]
    panel = render("Signing profiles", panel_rows or [("(none)", "")])
    return rows, panel + "".join(folder_notes)


async def workers_row(settings: Settings, sessions: Sessions, temporal: TemporalHandle) -> str:
    """The readiness of the workers, as /api/ready judges it, with the failing lines named."""
    if not settings.readiness.worker_domains:
        return "not required (Readiness:WorkerDomains is empty)"

    async def connected() -> Client:
        # The banner waits this long for Temporal, not the client's own retries.
        return await asyncio.wait_for(temporal(), CONNECT_TIMEOUT_SECONDS)

    verdict = await evaluate(worker_probes(settings, sessions, connected))
    failing = [c for c in verdict.checks if not c.ok]
    if not failing:
        return f"ready: {', '.join(settings.readiness.worker_domains)} polled"
    return "NOT READY: " + "; ".join(f"{c.name} ({c.detail})" for c in failing)
