"""The configured input folders: the profile bound to each, its watcher's status, the
status rows the watcher writes."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from sqlmodel import select

from activities.signer.contracts.jobs import FolderStatus
from activities.signer.ignore import ignored
from activities.signer.metrics import FOLDER_STATUS
from activities.signer.models.jobs import InputFolderState, SigningProfile
from activities.signer.repository import JobRepository
from shared.db.engine import Sessions
from shared.db.models import as_utc, utcnow
from shared.instances import cluster_instance_name
from shared.paging import Page, bounded, decode_cursor, encode_cursor
from shared.settings import InputFolderSettings, Settings

log = logging.getLogger("esteira.signer.folders")
# A watcher records each pass over its folder (every Pipeline:PollIntervalSeconds); one that
# missed this many passes in a row is taken for dead or hung (never less than
# Readiness:PollerStaleSeconds, the bound a silent process gets: one slow store write or GC
# pause must not read as a dead watcher).
SILENT_AFTER_PASSES = 3


def silent_after(settings: Settings) -> timedelta:
    """How long a folder's watcher may go without a pass before it reads as `NoSignal`."""
    return timedelta(seconds=max(SILENT_AFTER_PASSES * settings.pipeline.poll_interval_seconds,
                                 settings.readiness.poller_stale_seconds))


@dataclass(frozen=True)
class FolderBinding:
    """One configured folder: where it is, who watches it for which profile, how it runs."""

    name: str
    path: Path
    owner: str | None
    state: InputFolderState | None
    # When the store was read, and how old the watcher's last pass may be then.
    read_at: datetime = field(default_factory=utcnow)
    silent_after: timedelta = timedelta(seconds=15)

    @property
    def status(self) -> FolderStatus:
        """Unassigned (no profile chose it), Stopped (its watcher gave up), NoSignal (no
        watcher passed over it lately: never started, dead, hung or stopped), Unavailable
        (it can't be listed), Starting (just assigned) or Running."""
        if self.owner is None:
            return FolderStatus.UNASSIGNED
        state = self.state
        if state is None or not self.live:
            # A Stopped row stays Stopped: its watcher gave up before it went quiet.
            return (FolderStatus.STOPPED if state is not None
                    and state.status == FolderStatus.STOPPED else FolderStatus.NO_SIGNAL)
        if state.status in (FolderStatus.UNASSIGNED, FolderStatus.STARTING):
            # A profile chose it since the last pass: the next one starts watching.
            return FolderStatus.STARTING
        return FolderStatus(state.status)

    @property
    def live(self) -> bool:
        """Whether a watcher passed over the folder within the bound."""
        scanned = self.state.last_scan_at if self.state else None
        return scanned is not None and self.read_at - as_utc(scanned) <= self.silent_after

    @property
    def no_signal(self) -> str:
        """Why the folder reads as `NoSignal`, in one sentence."""
        scanned = self.state.last_scan_at if self.state else None
        if scanned is None:
            return ("no watcher has ever reported on this folder: the watcher process is "
                    "not running here (or is still starting)")
        silent = (self.read_at - as_utc(scanned)).total_seconds()
        return (f"no watcher has scanned this folder for {silent:.0f}s (silent after "
                f"{self.silent_after.total_seconds():g}s): the watcher process is dead, hung "
                f"or stopped; start it again")

    @property
    def last_error(self) -> str | None:
        """What stopped (or last troubled) its watcher; with no signal, why."""
        if self.status is FolderStatus.NO_SIGNAL:
            return self.no_signal
        return self.state.last_error if self.state else None

    @property
    def last_scan_at(self) -> datetime | None:
        """When its watcher last passed over it (every pass records it: the heartbeat)."""
        return self.state.last_scan_at if self.state else None


@dataclass(frozen=True)
class FolderOverview:
    """Every profile and every configured folder, read together."""

    profiles: list[SigningProfile]
    folders: list[FolderBinding]


class SignerFolders:
    """Input folders, their profile bindings and their watchers' status."""

    def __init__(self, settings: Settings, sessions: Sessions,
                 repository: JobRepository) -> None:
        self._settings = settings
        self._sessions = sessions
        self._repository = repository

    @property
    def configured(self) -> list[InputFolderSettings]:
        """The folders this host configures (`Storage:Inputs[]`)."""
        return self._settings.effective_inputs

    @property
    def instance(self) -> str:
        """This instance's name: every instance watches every folder, so an answer says who
        answered."""
        return cluster_instance_name(self._settings.cluster)

    def path_of(self, folder: InputFolderSettings) -> Path:
        """Where a configured folder is."""
        return self._settings.input_folder_path(folder)

    async def overview(self) -> FolderOverview:
        """Profiles and folders from one read of the store."""
        async with self._sessions() as session:
            profiles = list((await session.exec(select(SigningProfile))).all())
            states = {s.name: s for s in (await session.exec(select(InputFolderState))).all()}
        owners = {p.input_folder.lower(): p.name for p in profiles if p.input_folder}
        now, bound = utcnow(), silent_after(self._settings)
        folders = [FolderBinding(f.name, self.path_of(f), owners.get(f.name.lower()),
                                 states.get(f.name), now, bound)
                   for f in self.configured]
        return FolderOverview(profiles, folders)

    async def page(self, *, limit: int = 100, cursor: str | None = None
                   ) -> Page[FolderBinding]:
        """The configured folders by name, a page at a time."""
        limit = bounded(limit)
        folders = sorted((await self.overview()).folders, key=lambda f: f.name.lower())
        if cursor:
            [last] = decode_cursor(cursor, str)
            folders = [f for f in folders if f.name.lower() > last]
        items = folders[:limit]
        more = len(folders) > limit
        return Page(items, encode_cursor(items[-1].name.lower()) if more else None)

    async def profile_for(self, folder: str) -> SigningProfile | None:
        """The profile that owns an input folder, if any."""
        return await self._repository.profile_for_folder(folder)

    @staticmethod
    def ignores(folder: InputFolderSettings, name: str) -> bool:
        """Whether a file name is never a candidate in `folder` (temporary files, patterns)."""
        return ignored(name, folder.ignore)

    def choices(self, profiles: list[SigningProfile], own: str | None) -> list[str]:
        """What a profile may pick: every configured folder no other profile uses, and its own."""
        taken = {p.input_folder.lower() for p in profiles
                 if p.input_folder and p.input_folder != own}
        return [f.name for f in self.configured if f.name.lower() not in taken]

    def unconfigured(self, profile: SigningProfile) -> str | None:
        """Why a profile's stored folder isn't watched here; None when configured or unbound."""
        folder = profile.input_folder
        if not folder or folder.lower() in {f.name.lower() for f in self.configured}:
            return None
        # A stored binding is never revalidated at boot: the folder was renamed or removed
        # from the configuration after the profile chose it. The profile still serves uploads.
        return (f"profile {profile.name} is bound to folder {folder!r}, which this host does "
                f"not configure (Storage:Inputs[]): nothing is watched for it here and it still "
                f"serves uploads; choose another folder on /profiles/{profile.name}")

    async def record_state(self, name: str, status: FolderStatus, error: str | None,
                           failures: int) -> None:
        """Record a watcher's pass: status, last error, failure count and `last_scan_at` (its
        heartbeat, read by readiness and the API); a store outage never stops a watcher."""
        for each in FolderStatus:
            FOLDER_STATUS.labels(folder=name, status=each.value).set(1 if each is status else 0)
        try:
            async with self._sessions() as session:
                row = await session.get(InputFolderState, name) or InputFolderState(
                    name=name, status=status.value)
                row.status = status.value
                row.consecutive_failures = failures
                if error is not None or status is FolderStatus.RUNNING:
                    row.last_error = error if error is not None else row.last_error
                row.last_scan_at = row.updated_at = utcnow()
                session.add(row)
                await session.commit()
        except Exception as exc:
            log.warning("Could not record the state of folder %s: %s", name, exc)
