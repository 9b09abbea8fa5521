"""The first page of a held PDF as a PNG, for the approver's page (Poppler's `pdftoppm`)."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import shutil
from pathlib import Path

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.contracts.approvals import ApprovalErrorCode
from activities.signer.contracts.errors import signer_error
from activities.signer.models.approvals import JobApproval
from shared.errors import EsteiraError

# Bigger held files are hashed and signed all the same; only their preview is skipped.
PREVIEW_MAX_BYTES = 64 * 1024 * 1024
# A hostile or broken PDF must not hold a request (or a CPU) for long.
RENDER_TIMEOUT_SECONDS = 20.0
PREVIEW_HEIGHT_PX = 1000
PDF_MAGIC = b"%PDF-"


def no_preview(message: str) -> EsteiraError:
    """404 `approval.no-preview`: the page shows the message instead of an image."""
    return signer_error(ApprovalErrorCode.NO_PREVIEW, message)


async def first_page_png(sessions: async_sessionmaker[AsyncSession], job_id: str) -> bytes:
    """The held copy's first page, only while it is still the file the approvers were sent."""
    async with sessions() as session:
        approval = await session.get(JobApproval, job_id)
    if approval is None:
        raise no_preview(f"Job {job_id} has no approval step.")
    if approval.staged_size > PREVIEW_MAX_BYTES:
        raise no_preview("The file is too large to preview.")
    try:
        data = await asyncio.to_thread(Path(approval.staged_path).read_bytes)
    except OSError:
        raise no_preview("The held copy is no longer available.") from None
    if hashlib.sha256(data).hexdigest() != approval.staged_sha256:
        raise signer_error(ApprovalErrorCode.CONTENT_CHANGED,
                           "The held copy no longer matches the SHA-256 approvers were sent.")
    # The header may follow up to 1 KiB of junk (ISO 32000-1, 7.5.2).
    if PDF_MAGIC not in data[:1024]:
        raise no_preview("Only PDF files have a preview.")
    return await render_first_page(data)


async def render_first_page(pdf: bytes) -> bytes:
    """PNG bytes of page 1 (stdin to stdout: no temporary file of the document)."""
    program = shutil.which("pdftoppm")
    if program is None:
        raise no_preview("No previewer is installed on this server (poppler-utils).")
    process = await asyncio.create_subprocess_exec(
        program, "-png", "-f", "1", "-l", "1", "-singlefile",
        "-scale-to", str(PREVIEW_HEIGHT_PX), "-", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        png, _ = await asyncio.wait_for(process.communicate(pdf), RENDER_TIMEOUT_SECONDS)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise no_preview("The preview took too long to render.") from None
    if process.returncode != 0 or not png.startswith(b"\x89PNG"):
        raise no_preview("The first page could not be rendered.")
    return png
