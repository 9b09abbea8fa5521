"""The signer's storage tree: staging under a lock, compare-then-delete, no-overwrite promotion."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from activities.signer.contracts.jobs import SignerErrorCode

_CHUNK = 1024 * 1024
_RETRY_PAUSE_SECONDS = 0.2


class StorageError(Exception):
    """A storage step failed; `code` says which rule."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def storage_failure(exc: OSError, what: str) -> StorageError:
    """A failed file step of ours as the job's own code: a name too long, a full disk, or else."""
    if exc.errno == errno.ENAMETOOLONG:
        code = SignerErrorCode.OUTPUT_NAME_TOO_LONG
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT):
        code = SignerErrorCode.STORAGE_FULL
    else:
        code = SignerErrorCode.STORAGE_FAILED
    return StorageError(code, f"Storage failed on {what}: {exc.strerror or exc}")


@dataclass(frozen=True)
class Fingerprint:
    """What identifies the bytes that were staged: size and SHA-256."""

    size: int
    sha256: str


@dataclass(frozen=True)
class InputCheck:
    """The outcome of the compare-then-delete step."""

    deleted: bool
    reason: str = ""
    # The input was already gone: nothing diverged, nothing to hand back.
    gone: bool = False


class StorageTree:
    """`processing/<job>`, `output/`, `error/<job>` under one root."""

    def __init__(self, root: Path, *, read_attempts: int = 3) -> None:
        self.root = root
        self.processing = root / "processing"
        self.output = root / "output"
        self.error = root / "error"
        self.read_attempts = read_attempts

    def ensure(self) -> None:
        """Create the fixed folders."""
        for folder in (self.processing, self.output, self.error):
            folder.mkdir(parents=True, exist_ok=True)

    def staging_dir(self, job_id: str) -> Path:
        """`processing/<job id>/`."""
        return self.processing / job_id

    def stage(self, job_id: str, source: Path) -> tuple[Path, Fingerprint]:
        """Copy the input into `processing/<job>/` under an exclusive lock, hashing as it goes."""
        target_dir = self.staging_dir(job_id)
        target_dir.mkdir(parents=True, exist_ok=True)
        target = target_dir / source.name
        fingerprint = self._with_retries(source, lambda: _copy_locked(source, target))
        return target, fingerprint

    def delete_input_if_unchanged(self, source: Path, expected: Fingerprint) -> InputCheck:
        """Delete the input only if it is still the staged file; otherwise leave it be."""
        try:
            return self._with_retries(source, lambda: _compare_and_delete(source, expected))
        except StorageError as exc:
            return InputCheck(False, exc.message,
                              gone=exc.code == SignerErrorCode.JOB_INPUT_MISSING)

    def promote(self, job_id: str, artifact: Path, output_name: str) -> Path:
        """Move an artifact to `output/<name>`, never replacing an existing file."""
        self.output.mkdir(parents=True, exist_ok=True)
        final = self.output / output_name
        try:
            # link() fails if the name exists: the no-overwrite rule is atomic.
            os.link(artifact, final)
        except FileExistsError:
            if not _same_content(artifact, final):
                raise StorageError(
                    SignerErrorCode.OUTPUT_EXISTS,
                    f"Output already exists at {final}; resolve manually before re-queueing.",
                ) from None
            # This job's own earlier attempt put it there and died before recording it.
        except OSError as exc:
            raise storage_failure(exc, str(final)) from None
        artifact.unlink()
        _fsync_dir(self.output)
        return final

    def move_to_error(self, job_id: str) -> Path | None:
        """`processing/<job>/` -> `error/<job>/` (a twin gets a timestamp suffix)."""
        source = self.staging_dir(job_id)
        if not source.exists():
            return None
        self.error.mkdir(parents=True, exist_ok=True)
        target = self.error / job_id
        if target.exists():
            target = self.error / f"{job_id}-{datetime.now(UTC):%Y%m%d%H%M%S%f}"
        source.rename(target)
        return target

    def move_input_to_error(self, job_id: str, source: Path) -> Path:
        """Move an input straight to `error/<job>/` (a name that was already processed)."""
        target_dir = self.error / job_id
        target_dir.mkdir(parents=True, exist_ok=True)
        target = target_dir / source.name
        with _locked(source, fcntl.LOCK_EX):
            shutil.move(source, target)
        return target

    def remove_staging(self, job_id: str) -> None:
        """Drop `processing/<job>/` after a successful promotion."""
        shutil.rmtree(self.staging_dir(job_id), ignore_errors=True)

    def _with_retries(self, source: Path, step):
        last: StorageError | None = None
        for attempt in range(self.read_attempts):
            try:
                return step()
            except StorageError as exc:
                if exc.code not in (SignerErrorCode.INPUT_LOCKED, SignerErrorCode.INPUT_UNREADABLE):
                    raise
                last = exc
                if attempt + 1 < self.read_attempts:
                    time.sleep(_RETRY_PAUSE_SECONDS * (attempt + 1))
        assert last is not None
        raise last


def fingerprint_of(path: Path) -> Fingerprint:
    """Size and SHA-256 of a file."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return Fingerprint(size, digest.hexdigest())


@contextlib.contextmanager
def _locked(path: Path, mode: int) -> Iterator[int]:
    # A local lock only fences our own processes (the seed's "internal control"); the
    # fingerprint comparison is what protects a local input.
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise StorageError(SignerErrorCode.JOB_INPUT_MISSING, f"input {path} is gone") from None
    except PermissionError as exc:
        raise StorageError(
            SignerErrorCode.INPUT_UNREADABLE, f"unreadable: {path}: {exc.strerror}"
        ) from None
    try:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise StorageError(
                    SignerErrorCode.INPUT_LOCKED, f"held by another lease: {path}"
                ) from None
            raise
        yield fd
    finally:
        os.close(fd)


def _copy_locked(source: Path, target: Path) -> Fingerprint:
    digest = hashlib.sha256()
    size = 0
    with _locked(source, fcntl.LOCK_EX) as fd:
        try:
            writer = target.open("wb")
        except OSError as exc:
            raise storage_failure(exc, str(target)) from None
        with os.fdopen(os.dup(fd), "rb") as reader, writer:
            while True:
                try:
                    chunk = reader.read(_CHUNK)
                except OSError as exc:
                    raise StorageError(
                        SignerErrorCode.INPUT_UNREADABLE, f"unreadable: {source}: {exc.strerror}"
                    ) from None
                if not chunk:
                    break
                digest.update(chunk)
                size += len(chunk)
                try:
                    writer.write(chunk)
                except OSError as exc:
                    raise storage_failure(exc, str(target)) from None
            try:
                writer.flush()
                os.fsync(writer.fileno())
            except OSError as exc:
                raise storage_failure(exc, str(target)) from None
    return Fingerprint(size, digest.hexdigest())


def _compare_and_delete(source: Path, expected: Fingerprint) -> InputCheck:
    with _locked(source, fcntl.LOCK_EX):
        try:
            actual = fingerprint_of(source)
        except OSError as exc:
            raise StorageError(
                SignerErrorCode.INPUT_UNREADABLE, f"unreadable: {source}: {exc.strerror}"
            ) from None
        if actual != expected:
            return InputCheck(
                False,
                f"input changed since staging (size {expected.size} -> "
                f"{actual.size}, sha256 {expected.sha256[:12]}… -> "
                f"{actual.sha256[:12]}…)",
            )
        source.unlink()
    return InputCheck(True)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _same_content(first: Path, second: Path) -> bool:
    """The same file (a hard link) or the same bytes; read only when the sizes agree."""
    if os.path.samefile(first, second):
        return True
    if first.stat().st_size != second.stat().st_size:
        return False
    return fingerprint_of(first).sha256 == fingerprint_of(second).sha256
