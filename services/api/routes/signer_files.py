"""A job's files over REST: the list, and each file streamed as stored."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse
from pydantic import Field
from starlette.concurrency import iterate_in_threadpool

from activities.signer.operator import JobFile
from services.api.routes.signer_schemas import iso
from services.app_context import SignerFace
from shared.wire import WireModel

router = APIRouter(prefix="/api", tags=["signer"])
OCTET_STREAM = "application/octet-stream"
_FILE_ANSWER = {200: {"content": {OCTET_STREAM: {"schema": {"type": "string",
                                                            "format": "binary"}}},
                      "description": "The file's stored bytes (an `.enc` artifact stays "
                                     "encrypted: `esteira decrypt` reads it back)."}}


def _actor(request: Request) -> str:
    return getattr(request.state, "actor", "anonymous")


ActorDep = Annotated[str, Depends(_actor)]


def file_url(job_id: str, name: str) -> str:
    """Where a job's file is fetched (each path segment percent-encoded)."""
    return f"/api/jobs/{quote(job_id, safe='')}/files/{quote(name)}"


class JobFileOut(WireModel):
    """One downloadable file of a job."""

    name: str = Field(description="`output/<name>` or `error/<path>`: the fetch path's tail.")
    kind: str = Field(description="signed, reject (a rejected file handed back) or error.")
    size: int
    modified_at: str | None = Field(description="ISO 8601, UTC.")
    encrypted: bool = Field(description="A BSENC v1 artifact, downloaded as stored.")
    url: str


class JobFiles(WireModel):
    """`GET /api/jobs/{id}/files`: the files a job owns."""

    job_id: str
    items: list[JobFileOut]

    @classmethod
    def of(cls, job_id: str, files: list[JobFile]) -> JobFiles:
        """The listing as the wire shows it."""
        return cls(job_id=job_id, items=[JobFileOut(
            name=f.name, kind=f.kind, size=f.size, modified_at=iso(f.modified_at),
            encrypted=f.encrypted, url=file_url(job_id, f.name)) for f in files])


@router.get("/jobs/{job_id}/files", response_model=JobFiles)
async def list_job_files(signer: SignerFace, job_id: str) -> JobFiles:
    """The job's signed output or `.reject` return, and its `error/<id>/` copies (API key or
    an operator's session)."""
    return JobFiles.of(job_id, await signer.downloads.files(job_id))


@router.get("/jobs/{job_id}/files/{name:path}", response_class=StreamingResponse,
            responses=_FILE_ANSWER)
async def download_job_file(signer: SignerFace, actor: ActorDep, job_id: str,
                            name: str) -> StreamingResponse:
    """One listed file, streamed; the job's history and the events trail name who took it."""
    opened = await signer.downloads.open(job_id, name, actor=actor)
    return StreamingResponse(
        iterate_in_threadpool(opened.chunks()), media_type=OCTET_STREAM,
        headers={"Content-Length": str(opened.size),
                 "Content-Disposition": attachment(name.rsplit("/", 1)[-1])})


def attachment(base: str) -> str:
    """`Content-Disposition` for `base`: a plain-ASCII fallback and the exact UTF-8 name
    (RFC 6266); nothing a header can't carry (quotes, control characters) passes."""
    fallback = "".join(c if " " <= c <= "~" and c not in '"\\' else "_" for c in base)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(base, safe='')}"
