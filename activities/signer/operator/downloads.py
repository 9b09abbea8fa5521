"""A job's downloadable files: its signed output or `.reject` return, and its `error/<job>/`."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from activities.signer.approvals.returns import reject_name
from activities.signer.contracts.jobs import SignerErrorCode
from activities.signer.models.jobs import Job
from activities.signer.operator.errors import refuse
from activities.signer.repository import JobRepository
from activities.signer.storage import StorageTree
from shared.db.models import OperationalEvent

OUTPUT = "output"
ERROR = "error"
# Kinds of file a job owns: its signed artifact, a rejected file handed back, a failure's copy.
SIGNED, REJECT, ERROR_COPY = "signed", "reject", "error"
DOWNLOADED_EVENT = "JobFileDownloaded"
ENCRYPTED_SUFFIX = ".enc"


@dataclass(frozen=True)
class JobFile:
    """One file of a job, named by where it sits: `output/<name>` or `error/<path>`."""

    name: str
    kind: str
    size: int
    modified_at: datetime
    path: Path

    @property
    def encrypted(self) -> bool:
        """A BSENC artifact: the download is the stored bytes (`esteira decrypt` reads them)."""
        return self.name.endswith(ENCRYPTED_SUFFIX)


@dataclass
class OpenedFile:
    """A job's file opened for streaming; the reader closes `handle`."""

    file: JobFile
    handle: BinaryIO

    @property
    def size(self) -> int:
        """The opened file's size now (it may have changed since the listing)."""
        return os.fstat(self.handle.fileno()).st_size

    def chunks(self, size: int = 256 * 1024) -> Iterator[bytes]:
        """The bytes in chunks, closing the handle at the end (or when abandoned)."""
        with self.handle:
            while chunk := self.handle.read(size):
                yield chunk


class SignerDownloads:
    """Lists and opens the files a job owns; nothing else under the storage root is reachable."""

    def __init__(self, repository: JobRepository, storage: StorageTree) -> None:
        self._repository = repository
        self._storage = storage

    async def files(self, job_id: str) -> list[JobFile]:
        """The job's files (job.not-found for an unknown job)."""
        return await asyncio.to_thread(self._list, await self._job(job_id))

    async def open(self, job_id: str, name: str, *, actor: str) -> OpenedFile:
        """Open one of the job's files by its listed name and record who downloaded it.

        Only a name the listing gives is served, so `..`, absolute paths and encoded slashes
        match nothing; symlinks are never listed nor followed.
        """
        job = await self._job(job_id)
        found = next((f for f in await asyncio.to_thread(self._list, job) if f.name == name),
                     None)
        opened = await asyncio.to_thread(_open_regular, found.path) if found else None
        if found is None or opened is None:
            raise refuse(SignerErrorCode.JOB_FILE_NOT_FOUND,
                         f"Job {job_id} has no downloadable file {name!r}.")
        message = f"{name} downloaded by {actor}."
        await self._repository.note(job.id, message, event=OperationalEvent(
            domain="signer", type=DOWNLOADED_EVENT, message=f"Job {job.id}: {message}",
            actor=actor, properties={"jobId": job.id, "file": name, "size": found.size}))
        return OpenedFile(found, opened)

    async def _job(self, job_id: str) -> Job:
        job = await self._repository.get(job_id)
        if job is None:
            raise refuse(SignerErrorCode.JOB_NOT_FOUND, f"No job with id {job_id}.")
        return job

    def _list(self, job: Job) -> list[JobFile]:
        found = []
        if job.output_path:
            output = Path(job.output_path)
            # Only the file this job recorded, and only while it sits in this tree's output/.
            if _inside(output.parent, self._storage.output) and (
                    file := _file(f"{OUTPUT}/{output.name}", _kind(job, output.name), output)):
                found.append(file)
        error_dir = self._storage.error / job.id
        if not error_dir.is_symlink() and _inside(error_dir, self._storage.error):
            found.extend(_error_copies(error_dir))
        return found


def _kind(job: Job, name: str) -> str:
    returned = {reject_name(job.file_name, encrypted=e) for e in (False, True)}
    return REJECT if name in returned else SIGNED


def _error_copies(root: Path) -> list[JobFile]:
    copies = []
    # followlinks=False: a linked folder is not walked; linked files are skipped below.
    for folder, _dirs, names in sorted(os.walk(root, followlinks=False)):
        for name in sorted(names):
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if file := _file(f"{ERROR}/{relative}", ERROR_COPY, path):
                copies.append(file)
    return copies


def _file(name: str, kind: str, path: Path) -> JobFile | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None  # a symlink, a folder or a device is never a job's file
    return JobFile(name, kind, info.st_size, datetime.fromtimestamp(info.st_mtime, UTC), path)


def _inside(folder: Path, root: Path) -> bool:
    try:
        return folder.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def _open_regular(path: Path) -> BinaryIO | None:
    """The file opened without following a symlink swapped in since the listing."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")
