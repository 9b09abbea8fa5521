"""The signer's readiness checks: each input folder's watcher, each profile as a worker saw it."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.operator.folders import folder_overview, unconfigured_folder
from activities.signer.operator.health import is_keyless, profile_health
from activities.signer.operator.instances import cluster_instance_check
from shared.db.signer_models import InputFolderState, SigningProfile
from shared.readiness import Probe
from shared.settings import Settings

NO_PROFILE = "signing-profile:none"
# A KEYLESS profile's line: its approvers sign, so there is no key to find broken.
KEYLESS_PREFIX = "signing-profile-keyless:"


class SignerProbes:
    """Builds the probes from the current folders and profiles on every evaluation.

    Profiles are judged by what a worker found when it opened their keys: this process never
    opens a key or loads a PKCS#11 module.
    """

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.settings = settings
        self.sessions = sessions

    async def probes(self) -> list[Probe]:
        """`input-folder:<name>` (gating), `signing-profile:<name>` (not gating),
        `signing-profile:none` (gating) when no profile is enabled,
        `profile-input-folder:<profile>` (not gating) per profile bound to a folder, and in
        cluster mode `cluster-instance` (not gating)."""
        overview = await folder_overview(self.sessions, self.settings)
        probes = [self._folder(f.name, f.path, f.owner, f.state) for f in overview.folders]
        enabled = [p for p in overview.profiles if p.enabled]
        probes += [self._profile(p) for p in enabled]
        probes += [self._profile_folder(p) for p in overview.profiles if p.input_folder]
        if not enabled:
            probes.append(no_profile_probe())
        if self.settings.cluster.enabled:
            probes.append(self._cluster_instance())
        return probes

    def _profile_folder(self, profile: SigningProfile) -> Probe:
        # Not gating (the seed): the profile still serves uploads, and watching is gated by
        # the folder's own input-folder line; a stale binding is fixed on the profile's page.
        async def run() -> tuple[bool, str]:
            if (why := unconfigured_folder(profile, self.settings)) is not None:
                return False, why
            return True, f"folder {profile.input_folder} is configured on this host"

        return Probe(f"profile-input-folder:{profile.name}", run, gating=False)

    def _cluster_instance(self) -> Probe:
        # Red when stood down, yet not gating: a 503 would pull the instance out of the
        # balancer while it still serves the web and finishes what it holds (the seed).
        async def run() -> tuple[bool, str]:
            return await cluster_instance_check(self.sessions, self.settings)

        return Probe("cluster-instance", run, gating=False)

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

        if is_keyless(profile):
            return Probe(f"{KEYLESS_PREFIX}{profile.name}", run, gating=False)
        return Probe(f"signing-profile:{profile.name}", run, gating=False)


def no_profile_probe() -> Probe:
    """Fails readiness: with no enabled profile nothing can be signed."""

    async def run() -> tuple[bool, str]:
        return False, ("no signing profile is configured and enabled "
                       "(ESTEIRA_SIGNING__PROFILES); nothing is signed")

    return Probe(NO_PROFILE, run)

