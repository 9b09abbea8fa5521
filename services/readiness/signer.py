"""The signer's readiness checks: each input folder's watcher, each profile as a worker saw it."""

from __future__ import annotations

import os

from activities.signer.contracts.jobs import FolderStatus
from activities.signer.operator import FolderBinding, ProfileView, SignerOperations
from services.readiness.processes import needed_processes
from shared.db.models import as_utc
from shared.readiness import Probe

NO_PROFILE = "signing-profile:none"
# A KEYLESS profile's line: its approvers sign, so there is no key to find broken.
KEYLESS_PREFIX = "signing-profile-keyless:"
# A folder's watcher line: is some watcher still passing over it (its heartbeat)?
FOLDER_WATCHER_PREFIX = "folder-watcher:"


class SignerProbes:
    """Builds the probes from the current folders and profiles on every evaluation.

    Profiles are judged by what a worker found when it opened their keys: this process never
    opens a key or loads a PKCS#11 module.
    """

    def __init__(self, signer: SignerOperations) -> None:
        self.signer = signer

    async def probes(self) -> list[Probe]:
        """`input-folder:<name>` (gating), `folder-watcher:<name>` per assigned folder (gating
        while the deployment runs a watcher), `signing-profile:<name>` (not gating),
        `signing-profile:none` (gating) when no profile is enabled,
        `profile-input-folder:<profile>` (not gating) per profile bound to a folder, and in
        cluster mode `cluster-instance` (not gating)."""
        overview = await self.signer.folders.overview()
        probes = [self._folder(f) for f in overview.folders]
        # Gating unless Readiness:Processes says this deployment runs no watcher: then the
        # line still tells the truth (red) without failing the probe.
        watched = "watcher" in needed_processes(self.signer.settings)
        probes += [_folder_watcher(f, gating=watched) for f in overview.folders
                   if f.owner is not None]
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
            if folder.status is FolderStatus.UNAVAILABLE:
                return False, f"its watcher can't list it: {folder.last_error}"
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


def _folder_watcher(folder: FolderBinding, *, gating: bool) -> Probe:
    """Red when no watcher passed over the folder within the bound (dead, hung, stopped)."""

    async def run() -> tuple[bool, str]:
        if folder.status is FolderStatus.NO_SIGNAL:
            return False, folder.no_signal
        if folder.status is FolderStatus.STOPPED:
            return False, f"watcher stopped: {folder.last_error}"
        scanned = folder.last_scan_at
        age = (folder.read_at - as_utc(scanned)).total_seconds() if scanned else 0.0
        return True, (f"watcher live: last scan {age:.0f}s ago (silent after "
                      f"{folder.silent_after.total_seconds():g}s)")

    return Probe(f"{FOLDER_WATCHER_PREFIX}{folder.name}", run, gating=gating)


def no_profile_probe() -> Probe:
    """Fails readiness: with no enabled profile nothing can be signed."""

    async def run() -> tuple[bool, str]:
        return False, ("no signing profile is configured and enabled "
                       "(ESTEIRA_SIGNING__PROFILES); nothing is signed")

    return Probe(NO_PROFILE, run)
