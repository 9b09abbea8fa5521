"""The signer's readiness checks: each input folder's watcher, each profile as a worker saw it."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.operator.folders import folder_overview
from activities.signer.operator.health import profile_health
from shared.db.signer_models import InputFolderState, SigningProfile
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
        overview = await folder_overview(self.sessions, self.settings)
        probes = [self._folder(f.name, f.path, f.owner, f.state) for f in overview.folders]
        enabled = [p for p in overview.profiles if p.enabled]
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
            return await profile_health(profile, self.sessions)

        return Probe(f"signing-profile:{profile.name}", run, gating=False)


def no_profile_probe() -> Probe:
    """Fails readiness: with no enabled profile nothing can be signed."""

    async def run() -> tuple[bool, str]:
        return False, ("no signing profile is configured and enabled "
                       "(ESTEIRA_SIGNING__PROFILES); nothing is signed")

    return Probe(NO_PROFILE, run)

