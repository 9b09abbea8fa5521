"""The signer's readiness checks: each input folder's watcher, each profile as a worker saw it."""

from __future__ import annotations

import os

from activities.signer.contracts.jobs import FolderStatus
from activities.signer.operator import FolderBinding, ProfileView, SignerOperations
from shared.readiness import Probe

NO_PROFILE = "signing-profile:none"
# A KEYLESS profile's line: its approvers sign, so there is no key to find broken.
KEYLESS_PREFIX = "signing-profile-keyless:"


class SignerProbes:
    """Builds the probes from the current folders and profiles on every evaluation.

    Profiles are judged by what a worker found when it opened their keys: this process never
    opens a key or loads a PKCS#11 module.
    """

    def __init__(self, signer: SignerOperations) -> None:
        self.signer = signer

    async def probes(self) -> list[Probe]:
        """`input-folder:<name>` (gating), `signing-profile:<name>` (not gating),
        `signing-profile:none` (gating) when no profile is enabled,
        `profile-input-folder:<profile>` (not gating) per profile bound to a folder, and in
        cluster mode `cluster-instance` (not gating)."""
        overview = await self.signer.folders.overview()
        probes = [self._folder(f) for f in overview.folders]
        views = [ProfileView.of(p) for p in overview.profiles]
        enabled = [v for v in views if v.row.enabled]
        probes += [self._profile(v) for v in enabled]
        probes += [self._profile_folder(v) for v in views if v.row.input_folder]
        if not enabled:
            probes.append(no_profile_probe())
        if self.signer.settings.cluster.enabled:
            probes.append(Probe("cluster-instance", self.signer.instances.readiness_check,
                                # Red when stood down, yet not gating: a 503 would pull the
                                # instance out of the balancer while it still serves the web
                                # and finishes what it holds (the seed).
                                gating=False))
        return probes

    def _profile_folder(self, view: ProfileView) -> Probe:
        # Not gating (the seed): the profile still serves uploads, and watching is gated by
        # the folder's own input-folder line; a stale binding is fixed on the profile's page.
        profile = view.row

        async def run() -> tuple[bool, str]:
            if (why := self.signer.folders.unconfigured(profile)) is not None:
                return False, why
            return True, f"folder {profile.input_folder} is configured on this host"

        return Probe(f"profile-input-folder:{profile.name}", run, gating=False)

    def _folder(self, folder: FolderBinding) -> Probe:
        async def run() -> tuple[bool, str]:
            path = folder.path
            if folder.status is FolderStatus.UNASSIGNED:
                # Nobody asked this instance to watch it: not broken, so not red.
                return True, "unassigned: no profile chose this folder; its files wait"
            if folder.status is FolderStatus.STOPPED:
                return False, f"watcher stopped: {folder.last_error}"
            if not path.is_dir():
                return False, f"{path} does not exist or is not a folder"
            if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
                return False, f"{path} is not readable and writable by this process"
            return True, f"{path} (profile {folder.owner})"

        return Probe(f"input-folder:{folder.name}", run)

    def _profile(self, view: ProfileView) -> Probe:
        async def run() -> tuple[bool, str]:
            return await self.signer.profiles.health(view.row)

        prefix = KEYLESS_PREFIX if view.keyless else "signing-profile:"
        return Probe(f"{prefix}{view.row.name}", run, gating=False)


def no_profile_probe() -> Probe:
    """Fails readiness: with no enabled profile nothing can be signed."""

    async def run() -> tuple[bool, str]:
        return False, ("no signing profile is configured and enabled "
                       "(ESTEIRA_SIGNING__PROFILES); nothing is signed")

    return Probe(NO_PROFILE, run)
