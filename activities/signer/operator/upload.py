"""One upload handler for every door (REST multipart, gRPC stream): same limits, same refusals."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterable, Awaitable, Callable
from pathlib import Path

from activities.signer.enqueue import Enqueuer
from activities.signer.operator import intake
from activities.signer.operator.errors import refuse
from activities.signer.repository import JobRepository
from shared.contracts.signer import SignerErrorCode
from shared.settings import Settings


async def receive_upload(repository: JobRepository, settings: Settings, *, raw_name: str,
                         profile: str | None, chunks: AsyncIterable[bytes],
                         enqueuer: Callable[[], Awaitable[Enqueuer]]) -> str:
    """Check, receive and queue an uploaded file; the new job id. A refusal stores nothing."""
    if not settings.upload.enabled:
        raise refuse(SignerErrorCode.UPLOAD_DISABLED, "Uploads are disabled on this host.")
    name = intake.sanitize_file_name(raw_name)
    chosen = await intake.resolve_profile(repository, settings, profile)
    incoming = intake.uploads_dir(settings) / ".incoming" / str(uuid.uuid4())
    incoming.parent.mkdir(parents=True, exist_ok=True)
    limit = settings.upload.max_bytes
    if not await _receive_limited(chunks, incoming, limit):
        raise refuse(SignerErrorCode.UPLOAD_TOO_LARGE,
                     f"The file is larger than Upload:MaxBytes ({limit}).")
    try:
        queue = await enqueuer()
    except BaseException:
        incoming.unlink(missing_ok=True)
        raise
    return await intake.accept_upload(queue, incoming, name, chosen, settings)


async def _receive_limited(chunks: AsyncIterable[bytes], target: Path, limit: int) -> bool:
    """Write `chunks` to `target`; False (and nothing kept) past `limit` bytes."""
    written = 0
    out = await asyncio.to_thread(target.open, "wb")
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
