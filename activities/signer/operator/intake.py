"""The operator doors into the queue: upload (`POST /api/files`) and rescan."""

from __future__ import annotations

import logging
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from activities.signer.enqueue import Enqueuer, Outcome
from activities.signer.ignore import ignored
from activities.signer.names import name_problem
from activities.signer.operator.errors import refuse
from activities.signer.repository import JobRepository
from shared.contracts.signer import JobSource, SignerErrorCode
from shared.db.signer_models import SigningProfile
from shared.settings import Settings

log = logging.getLogger("esteira.signer.intake")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f<>:\"|?*]")


def sanitize_file_name(raw: str) -> str:
    """Keep only the last path component, without control or reserved characters."""
    name = unicodedata.normalize("NFC", PurePosixPath(raw.replace("\\", "/")).name)
    name = _UNSAFE.sub("_", name).strip(" .")
    if not name or name in {".", ".."}:
        raise refuse(SignerErrorCode.INPUT_INVALID_NAME,
                     f"The file name {raw!r} can't be used; send a plain file name.")
    if (problem := name_problem(name)) is not None:
        raise refuse(SignerErrorCode.INPUT_INVALID_NAME, problem)
    return name


async def resolve_profile(repository: JobRepository, settings: Settings, name: str | None
                          ) -> SigningProfile:
    """The named profile, or the default one for an upload that names none."""
    wanted = name or settings.signing.default_profile
    profile = await repository.profile(wanted)
    if profile is None:
        raise refuse(SignerErrorCode.PROFILE_NOT_FOUND, f"No signing profile named {wanted}.")
    if not profile.enabled:
        raise refuse(SignerErrorCode.PROFILE_DISABLED, f"Profile {wanted} is disabled.")
    return profile


def uploads_dir(settings: Settings) -> Path:
    """Where uploaded files wait for their job (the product names and owns them)."""
    return settings.storage_root / "uploads"


async def accept_upload(enqueuer: Enqueuer, staged: Path, file_name: str,
                        profile: SigningProfile, settings: Settings) -> str:
    """Move a fully received upload into place and queue it; refusals leave nothing stored."""
    owner = await enqueuer.repository.name_owner(file_name)
    if owner is not None and settings.pipeline.reject_already_processed_file_names:
        staged.unlink(missing_ok=True)
        raise refuse(SignerErrorCode.FILE_ALREADY_PROCESSED,
                     f"A file named {file_name} was already processed by job {owner.id}.")
    target = uploads_dir(settings) / file_name
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        # link() refuses an existing name: an upload never replaces a file another job holds.
        os.link(staged, target)
    except FileExistsError:
        staged.unlink(missing_ok=True)
        raise refuse(SignerErrorCode.JOB_ALREADY_ACTIVE,
                     f"An upload named {file_name} is still waiting for its job.") from None
    staged.unlink(missing_ok=True)
    result = await enqueuer.enqueue(target, source=JobSource.UPLOAD, profile=profile)
    if result.outcome is not Outcome.ENQUEUED:
        target.unlink(missing_ok=True)
        code = SignerErrorCode(result.code) if result.code else SignerErrorCode.JOB_ALREADY_ACTIVE
        raise refuse(code, result.message)
    return result.job_id


@dataclass
class RescanRow:
    """One folder's counts in a rescan answer."""

    folder: str
    profile: str | None = None
    scanned: int = 0
    enqueued: int = 0
    ignored: int = 0
    errors: int = 0
    alreadyProcessed: int = 0
    alreadyActive: int = 0
    unassigned: bool = False
    messages: list[str] = field(default_factory=list)


async def rescan(enqueuer: Enqueuer, repository: JobRepository, settings: Settings,
                 folder_name: str | None = None) -> list[RescanRow]:
    """Queue every file of the folder(s) that isn't an active job; folders fail alone."""
    folders = settings.effective_inputs
    if folder_name is not None:
        folders = [f for f in folders if f.name.lower() == folder_name.lower()]
        if not folders:
            raise refuse(SignerErrorCode.FOLDER_NOT_FOUND,
                         f"No input folder named {folder_name} is configured on this host.")
    rows = []
    for folder in folders:
        row = RescanRow(folder.name)
        rows.append(row)
        profile = await repository.profile_for_folder(folder.name)
        if profile is None:
            row.unassigned = True
            log.info("Rescan skipped folder %s: no profile chose it", folder.name)
            continue
        row.profile = profile.name
        path = settings.input_folder_path(folder)
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
            result = await enqueuer.enqueue(file, source=JobSource.RESCAN, profile=profile,
                                            folder=folder.name)
            if result.outcome is Outcome.ENQUEUED:
                row.enqueued += 1
            elif result.outcome is Outcome.ALREADY_PROCESSED:
                row.alreadyProcessed += 1
            elif result.outcome is Outcome.ALREADY_ACTIVE:
                row.alreadyActive += 1
            else:
                row.errors += 1
                row.messages.append(f"{file.name}: {result.message}")
    return rows
