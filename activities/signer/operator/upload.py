"""An upload's bytes and name, whichever door sent them (REST multipart, gRPC stream)."""

from __future__ import annotations

import asyncio
import contextlib
import re
import unicodedata
from collections.abc import AsyncIterable, AsyncIterator
from pathlib import Path, PurePosixPath
from typing import Protocol

from activities.signer.contracts.jobs import SignerErrorCode
from activities.signer.operator.errors import refuse
from shared.settings import Settings

_UNSAFE = re.compile(r"[\x00-\x1f\x7f<>:\"|?*]")
# Read a multipart upload this much at a time.
READ_CHUNK = 1024 * 1024
# What a one-file multipart body carries besides the file: boundaries, part headers (a 255-byte
# name, twice when percent-encoded) and the profile field. A body past the limit by more is
# refused while it streams in.
MULTIPART_ALLOWANCE = 64 * 1024


class Readable(Protocol):
    """A received file that is read in chunks (a multipart upload)."""

    async def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes; empty at the end."""
        ...


# What a door hands over: a file to read, or the chunks of a stream (gRPC).
UploadSource = Readable | AsyncIterable[bytes]


async def chunks_of(source: UploadSource) -> AsyncIterator[bytes]:
    """The bytes of an upload, chunk by chunk."""
    if isinstance(source, AsyncIterable):
        async for chunk in source:
            yield chunk
        return
    while chunk := await source.read(READ_CHUNK):
        yield chunk


def sanitize_file_name(raw: str) -> str:
    """Keep only the last path component, without control or reserved characters."""
    name = unicodedata.normalize("NFC", PurePosixPath(raw.replace("\\", "/")).name)
    name = _UNSAFE.sub("_", name)
    trimmed = name.strip(" .")
    if not trimmed or trimmed in {".", ".."}:
        raise refuse(SignerErrorCode.INPUT_INVALID_NAME,
                     f"The file name {raw!r} can't be used; send a plain file name.")
    if _extension(trimmed) != _extension(name.rstrip(" .")):
        # `.pdf` would become `pdf` and be signed as CAdES: the extension picks the format,
        # so a name that is only an extension is refused rather than signed as something else.
        raise refuse(SignerErrorCode.INPUT_INVALID_NAME,
                     f"The file name {raw!r} is only an extension; give the file a name "
                     "before its extension.")
    return trimmed


def _extension(name: str) -> str:
    """What follows the last dot, lower-cased (empty without one)."""
    return name.rsplit(".", 1)[1].lower() if "." in name else ""


def uploads_dir(settings: Settings) -> Path:
    """Where uploaded files wait for their job (the product names and owns them)."""
    return settings.storage_root / "uploads"


async def receive_limited(chunks: AsyncIterable[bytes], target: Path, limit: int) -> bool:
    """Write `chunks` to `target`; False (and nothing kept) past `limit` bytes."""
    written = 0
    opening = asyncio.ensure_future(asyncio.to_thread(target.open, "wb"))
    try:
        out = await asyncio.shield(opening)
    except BaseException:
        # Cancelled while the thread opens it (a gRPC call the transport ended): the file is
        # created anyway, so wait for it and remove it rather than leave an empty one behind.
        with contextlib.suppress(BaseException):
            (await opening).close()
        target.unlink(missing_ok=True)
        raise
    try:
        async for chunk in chunks:
            written += len(chunk)
            if written > limit:
                break
            await asyncio.to_thread(out.write, chunk)
    except BaseException:
        # A sender that vanishes mid-stream leaves no half file behind.
        out.close()
        target.unlink(missing_ok=True)
        raise
    out.close()
    if written > limit:
        target.unlink(missing_ok=True)
        return False
    return True
