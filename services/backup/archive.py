"""The archive: a tar of named files and a manifest with each one's size, SHA-256 and mode."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import os
import tarfile
import tempfile
import time
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

FORMAT = 1
MANIFEST = "manifest.json"
CHUNK = 1 << 20
# A file up to this size is copied in memory before it enters the archive; larger ones spill
# to a temporary file. Either way its size is fixed before its tar header is written, so a
# file that grows or shrinks meanwhile can't break the archive.
SPOOL_BYTES = 16 << 20
MAX_MANIFEST_BYTES = 64 << 20
# What a damaged or foreign archive raises while it is read.
READ_ERRORS = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile)


class CorruptArchiveError(ValueError):
    """The archive is damaged, incomplete or not one of ours; the message says what."""


@dataclass(frozen=True)
class Entry:
    """One archived file: its name in the archive, size, SHA-256 (hex) and mode."""

    name: str
    size: int
    sha256: str
    mode: str


@dataclass
class Manifest:
    """What an archive holds, and what it deliberately does not."""

    created_at: str
    esteira_version: str
    data_dir: str
    store: str
    temporal: str
    files: list[Entry] = field(default_factory=list)
    not_included: list[str] = field(default_factory=list)
    format: int = FORMAT

    def to_bytes(self) -> bytes:
        """The manifest as indented JSON."""
        return json.dumps(asdict(self), indent=2, ensure_ascii=False).encode()

    @classmethod
    def parse(cls, raw: bytes) -> Manifest:
        """Read a manifest, refusing one that isn't ours or is of a newer format."""
        try:
            data: dict[str, Any] = json.loads(raw)
            if data.get("format") != FORMAT:
                raise CorruptArchiveError(
                    f"manifest format {data.get('format')!r}, this release reads {FORMAT}")
            files = [Entry(**entry) for entry in data.pop("files")]
            return cls(**data, files=files)
        except CorruptArchiveError:
            raise
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise CorruptArchiveError(f"unreadable manifest ({exc})") from None


def safe_name(name: str) -> str:
    """`name` if it is a plain relative path inside the archive; CorruptArchiveError if not."""
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or str(path) != name:
        raise CorruptArchiveError(f"unsafe member name {name!r}")
    return name


@contextlib.contextmanager
def archive_writer(target: IO[bytes], *, compress: bool) -> Iterator[ArchiveWriter]:
    """A writer on `target` (gzip when asked); an exception leaves the archive unfinished."""
    # Stream mode: the output may be a pipe (`esteira backup -o -`).
    with tarfile.open(fileobj=target, mode="w|gz" if compress else "w|",
                      format=tarfile.PAX_FORMAT) as tar:
        yield ArchiveWriter(tar)


class ArchiveWriter:
    """Adds files to a tar, hashing each; the manifest goes in last."""

    def __init__(self, tar: tarfile.TarFile) -> None:
        self._tar = tar
        self.entries: list[Entry] = []

    def add(self, name: str, source: IO[bytes], mode: int) -> Entry:
        """Copy `source` (read to its end now) into the archive as `name`."""
        digest, size = hashlib.sha256(), 0
        with tempfile.SpooledTemporaryFile(SPOOL_BYTES) as spool:
            while chunk := source.read(CHUNK):
                digest.update(chunk)
                spool.write(chunk)
                size += len(chunk)
            spool.seek(0)
            self._tar.addfile(_member(name, size, mode), spool)
        entry = Entry(safe_name(name), size, digest.hexdigest(), f"{mode & 0o777:04o}")
        self.entries.append(entry)
        return entry

    def finish(self, manifest: Manifest) -> None:
        """Write the manifest, listing every entry added, as the last member."""
        manifest.files = list(self.entries)
        raw = manifest.to_bytes()
        self._tar.addfile(_member(MANIFEST, len(raw), 0o600), io.BytesIO(raw))


def extract_verified(source: IO[bytes], staging: Path) -> Manifest:
    """Unpack every member into `staging`, then check each against the manifest.

    Refuses (CorruptArchiveError) an unreadable archive, a member that is not a plain file
    with a safe name, a missing, extra or repeated member, and any size or SHA-256 mismatch.
    """
    found: dict[str, tuple[int, str]] = {}
    manifest: Manifest | None = None
    try:
        with tarfile.open(fileobj=source, mode="r|*") as tar:
            for member in tar:
                name = safe_name(member.name)
                if not member.isreg():
                    raise CorruptArchiveError(f"{name} is not a regular file")
                if name in found or (name == MANIFEST and manifest is not None):
                    raise CorruptArchiveError(f"{name} appears twice")
                handle = tar.extractfile(member)
                assert handle is not None  # a regular file always has content
                if name == MANIFEST:
                    manifest = Manifest.parse(handle.read(MAX_MANIFEST_BYTES))
                    continue
                found[name] = _unpack(handle, staging / name)
    except READ_ERRORS as exc:
        raise CorruptArchiveError(f"not a readable archive ({exc or type(exc).__name__})") \
            from None
    if manifest is None:
        raise CorruptArchiveError("no manifest.json: not an esteira backup, or cut short")
    _check(manifest, found)
    return manifest


def _check(manifest: Manifest, found: dict[str, tuple[int, str]]) -> None:
    listed = {safe_name(entry.name): entry for entry in manifest.files}
    if extra := sorted(set(found) - set(listed)):
        raise CorruptArchiveError(f"{extra[0]} is not in the manifest")
    if missing := sorted(set(listed) - set(found)):
        raise CorruptArchiveError(f"{missing[0]} is listed in the manifest but missing "
                                  f"({len(missing)} missing)")
    for name, entry in listed.items():
        size, sha256 = found[name]
        if size != entry.size:
            raise CorruptArchiveError(f"{name} has {size} bytes, the manifest says {entry.size}")
        if sha256 != entry.sha256:
            raise CorruptArchiveError(f"{name} fails its SHA-256 check")


def _unpack(handle: IO[bytes], target: Path) -> tuple[int, str]:
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    digest, size = hashlib.sha256(), 0
    # Owner only from the first byte: stores and keys are among them.
    with os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
            out.write(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def _member(name: str, size: int, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(safe_name(name))
    info.size, info.mode, info.type = size, mode & 0o777, tarfile.REGTYPE
    info.mtime = int(time.time())
    return info
