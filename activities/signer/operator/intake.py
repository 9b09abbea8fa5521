"""The operator's doors into the queue: upload (`POST /api/files`) and rescan."""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from activities.signer.contracts.jobs import ACTIVE_STATUSES, JobSource, SignerErrorCode
from activities.signer.enqueue import Enqueuer, EnqueueResult, Outcome, Screening
from activities.signer.ignore import ignored
from activities.signer.models.jobs import Job, SigningProfile
from activities.signer.names import name_problem
from activities.signer.operator.errors import refuse
from activities.signer.operator.upload import (
    MULTIPART_ALLOWANCE,
    UploadSource,
    chunks_of,
    receive_limited,
    sanitize_file_name,
    uploads_dir,
)
from activities.signer.repository import JobRepository
from shared.errors import EsteiraError
from shared.settings import Settings

log = logging.getLogger("esteira.signer.intake")


@dataclass
class RescanRow:
    """One folder's counts in a rescan."""

    folder: str
    profile: str | None = None
    scanned: int = 0
    enqueued: int = 0
    ignored: int = 0
    errors: int = 0
    already_processed: int = 0
    already_active: int = 0
    unassigned: bool = False
    messages: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RescanTotals:
    """A rescan's counts over every folder, and how many folders no profile chose."""

    scanned: int
    enqueued: int
    ignored: int
    errors: int
    already_processed: int
    already_active: int
    unassigned: int


@dataclass(frozen=True)
class RescanReport:
    """Per-folder rows of a rescan and their totals."""

    folders: list[RescanRow]

    @property
    def totals(self) -> RescanTotals:
        """The rows summed."""
        rows = self.folders
        return RescanTotals(
            scanned=sum(r.scanned for r in rows), enqueued=sum(r.enqueued for r in rows),
            ignored=sum(r.ignored for r in rows), errors=sum(r.errors for r in rows),
            already_processed=sum(r.already_processed for r in rows),
            already_active=sum(r.already_active for r in rows),
            unassigned=sum(1 for r in rows if r.unassigned))


class SignerIntake:
    """Files becoming jobs: every door goes through the process's one enqueuer."""

    def __init__(self, settings: Settings, repository: JobRepository,
                 enqueuer: Enqueuer) -> None:
        self._settings = settings
        self._repository = repository
        self._enqueuer = enqueuer

    @property
    def upload_enabled(self) -> bool:
        """`Upload:Enabled` (read at boot): both upload doors are off when false."""
        return self._settings.upload.enabled

    @property
    def body_limit(self) -> int:
        """The most bytes a one-file upload request may carry: `Upload:MaxBytes` and room for
        its multipart framing (a door stops reading past it)."""
        return self._settings.upload.max_bytes + MULTIPART_ALLOWANCE

    def too_large(self) -> EsteiraError:
        """The refusal of an upload past `Upload:MaxBytes`, whichever door measured it."""
        limit = self._settings.upload.max_bytes
        return refuse(SignerErrorCode.UPLOAD_TOO_LARGE,
                      f"The file is larger than Upload:MaxBytes ({limit}).")

    async def upload(self, *, raw_name: str, profile: str | None,
                     content: UploadSource) -> Job:
        """Check, receive and queue an uploaded file: same limits and refusals on every door.

        The name rule and the store's "already processed?" are asked once each; a refusal
        stores nothing.
        """
        if not self.upload_enabled:
            raise refuse(SignerErrorCode.UPLOAD_DISABLED, "Uploads are disabled on this host.")
        name = sanitize_file_name(raw_name)
        # Before a byte is read: a name the pipeline can't carry is refused outright.
        if (problem := name_problem(name)) is not None:
            raise refuse(SignerErrorCode.INPUT_INVALID_NAME, problem)
        chosen = await self._resolve_profile(profile)
        target = uploads_dir(self._settings) / name
        incoming = target.parent / ".incoming" / str(uuid.uuid4())
        incoming.parent.mkdir(parents=True, exist_ok=True)
        limit = self._settings.upload.max_bytes
        if not await receive_limited(chunks_of(content), incoming, limit):
            raise self.too_large()
        try:
            latest, owner = await self._enqueuer.lookup(target, source=JobSource.UPLOAD)
            if owner is not None:
                raise refuse(SignerErrorCode.FILE_ALREADY_PROCESSED,
                             f"A file named {name} was already processed by job {owner.id}.")
            _place(incoming, target)
        finally:
            incoming.unlink(missing_ok=True)
        try:
            result = await self._enqueuer.enqueue(target, source=JobSource.UPLOAD,
                                                  profile=chosen,
                                                  screening=Screening(None, latest, owner))
        except BaseException:
            # A half-done upload must not hold its name: the file goes unless a job has it.
            await self._drop_unclaimed(target)
            raise
        if result.outcome is not Outcome.ENQUEUED or result.job_id is None:
            target.unlink(missing_ok=True)
            code = SignerErrorCode(result.code) if result.code \
                else SignerErrorCode.JOB_ALREADY_ACTIVE
            raise refuse(code, result.message)
        job = await self._repository.get(result.job_id)
        if job is None:  # a Clear Jobs ran meanwhile
            raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {result.job_id}.")
        return job

    async def _drop_unclaimed(self, target: Path) -> None:
        """Remove an upload whose enqueue threw, unless a job row was written for it (its
        workflow is then started later and needs the file)."""
        try:
            holder = await self._repository.latest_for_path(str(target))
        except Exception:  # the store that failed the enqueue may fail this question too
            log.exception("Upload %s failed and the store can't tell whether a job holds it; "
                          "the file is removed so the name stays free", target.name)
            holder = None
        if holder is not None and holder.status in ACTIVE_STATUSES:
            log.error("Upload %s failed after job %s was recorded; its file is kept for it",
                      target.name, holder.id)
            return
        target.unlink(missing_ok=True)
        log.exception("Upload %s failed before a job held it; its file was removed",
                      target.name)

    async def _resolve_profile(self, name: str | None) -> SigningProfile:
        """The named profile, or the default one for an upload that names none."""
        wanted = name or self._settings.signing.default_profile
        profile = await self._repository.profile(wanted)
        if profile is None:
            raise refuse(SignerErrorCode.PROFILE_NOT_FOUND, f"No signing profile named {wanted}.")
        if not profile.enabled:
            raise refuse(SignerErrorCode.PROFILE_DISABLED, f"Profile {wanted} is disabled.")
        return profile

    async def rescan(self, folder_name: str | None = None) -> RescanReport:
        """Queue every file of the folder(s) that isn't an active job; folders fail alone."""
        folders = self._settings.effective_inputs
        if folder_name is not None:
            folders = [f for f in folders if f.name.lower() == folder_name.lower()]
            if not folders:
                raise refuse(SignerErrorCode.FOLDER_NOT_FOUND,
                             f"No input folder named {folder_name} is configured on this host.")
        rows = []
        for folder in folders:
            row = RescanRow(folder.name)
            rows.append(row)
            profile = await self._repository.profile_for_folder(folder.name)
            if profile is None:
                row.unassigned = True
                log.info("Rescan skipped folder %s: no profile chose it", folder.name)
                continue
            row.profile = profile.name
            path = self._settings.input_folder_path(folder)
            try:
                files = sorted(p for p in path.iterdir()
                               if p.is_file() and not p.is_symlink()
                               and not ignored(p.name, folder.ignore))
            except OSError as exc:
                row.errors = 1
                # The folder's name in the answer, its path only in the log.
                row.messages.append(f"Folder {folder.name} can't be listed: {exc.strerror}")
                log.error("Rescan could not list %s: %s", path, exc)
                continue
            if not profile.enabled:
                row.ignored = len(files)
                log.info("Rescan ignored %s file(s) in %s: profile %s is disabled", len(files),
                         folder.name, profile.name)
                continue
            for file in files:
                row.scanned += 1
                _count(row, file, await self._enqueuer.enqueue(
                    file, source=JobSource.RESCAN, profile=profile, folder=folder.name))
        return RescanReport(rows)


def _place(incoming: Path, target: Path) -> None:
    """Move a fully received upload into place under its own name."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        # link() refuses an existing name: an upload never replaces a file another job holds.
        os.link(incoming, target)
    except FileExistsError:
        raise refuse(SignerErrorCode.JOB_ALREADY_ACTIVE,
                     f"An upload named {target.name} is still waiting for its job.") from None


def _count(row: RescanRow, file: Path, result: EnqueueResult) -> None:
    if result.outcome is Outcome.ENQUEUED:
        row.enqueued += 1
    elif result.outcome is Outcome.ALREADY_PROCESSED:
        row.already_processed += 1
    elif result.outcome is Outcome.ALREADY_ACTIVE:
        row.already_active += 1
    else:
        row.errors += 1
        row.messages.append(f"{file.name}: {result.message}")
