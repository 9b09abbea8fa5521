"""The signer's readiness checks: each input folder's watcher, each profile as a worker saw it."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import func
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.health_reporter import recorded_health
from activities.signer.lacuna.health import folder_gone
from shared.db.signer_models import InputFolderState, Job, SigningProfile
from shared.metrics_signer import QUEUE_DEPTH
from shared.readiness import Probe
from shared.settings import Settings

NO_PROFILE = "signing-profile:none"


class SignerProbes:
    """Builds the probes from the current folders and profiles on every evaluation.

    Profiles are judged by what a worker found when it opened their keys: this process never
    opens a key or loads a PKCS#11 module.
    """

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.settings = settings
        self.sessions = sessions

    async def probes(self) -> list[Probe]:
        """`input-folder:<name>` (gating), `signing-profile:<name>` (not gating), and
        `signing-profile:none` (gating) when no profile is enabled."""
        async with self.sessions() as session:
            profiles = (await session.exec(select(SigningProfile))).all()
            states = {s.name: s for s in (await session.exec(select(InputFolderState))).all()}
        owners = {p.input_folder.lower(): p.name for p in profiles if p.input_folder}
        probes = [
            self._folder(folder.name, self.settings.input_folder_path(folder),
                         owners.get(folder.name.lower()), states.get(folder.name))
            for folder in self.settings.effective_inputs
        ]
        enabled = [p for p in profiles if p.enabled]
        probes += [self._profile(p) for p in enabled]
        if not enabled:
            probes.append(no_profile_probe())
        return probes

    def _folder(self, name: str, path: Path, owner: str | None,
                state: InputFolderState | None) -> Probe:
        async def run() -> tuple[bool, str]:
            if owner is None:
                # Nobody asked this instance to watch it: not broken, so not red.
                return True, "unassigned: no profile chose this folder; its files wait"
            if state is not None and state.status == "Stopped":
                return False, f"watcher stopped: {state.last_error}"
            if not path.is_dir():
                return False, f"{path} does not exist or is not a folder"
            if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
                return False, f"{path} is not readable and writable by this process"
            return True, f"{path} (profile {owner})"

        return Probe(f"input-folder:{name}", run)

    def _profile(self, profile: SigningProfile) -> Probe:
        async def run() -> tuple[bool, str]:
            ok, detail = await recorded_health(profile, self.sessions)
            # Read on every probe: binding another Signer folder clears it without a restart.
            if ok and (gone := await folder_gone(profile, self.sessions)):
                return False, gone
            return ok, detail

        return Probe(f"signing-profile:{profile.name}", run, gating=False)


def no_profile_probe() -> Probe:
    """Fails readiness: with no enabled profile nothing can be signed."""

    async def run() -> tuple[bool, str]:
        return False, ("no signing profile is configured and enabled "
                       "(ESTEIRA_SIGNING__PROFILES); nothing is signed")

    return Probe(NO_PROFILE, run)


async def refresh_queue_depth(sessions: async_sessionmaker[AsyncSession]) -> None:
    """Set `bulksigner_queue_depth{status}` from the store (a scrape never fails on it)."""
    waiting = ("Queued", "AwaitingApproval", "AwaitingSigner", "Processing", "Verifying")
    try:
        async with sessions() as session:
            counts = dict((await session.exec(
                select(Job.status, func.count()).where(Job.status.in_(waiting))
                .group_by(Job.status))).all())
    except Exception:
        return
    for status in waiting:
        QUEUE_DEPTH.labels(status=status).set(counts.get(status, 0))
