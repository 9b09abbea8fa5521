"""The signer's REST answers as models, so the OpenAPI document types them (`signer_views`
builds the same shapes; the times are the ISO 8601 strings it writes)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.contracts.signer import JobStatus


class _Answer(BaseModel):
    # A member added to a view before its model is still sent, not dropped.
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class JobSummary(_Answer):
    """A row of `GET /api/jobs`."""

    id: str
    fileName: str
    status: JobStatus
    format: str | None
    profile: str | None
    folder: str | None
    source: str
    errorCode: str | None
    error: str | None
    parentJobId: str | None
    createdAt: str | None = Field(description="ISO 8601, UTC.")
    completedAt: str | None = Field(description="ISO 8601, UTC.")


class JobPage(_Answer):
    """`GET /api/jobs`: a page, newest first, and the cursor to the next one."""

    items: list[JobSummary]
    nextCursor: str | None


class Timings(_Answer):
    """When a job was queued, started, sent to sign and completed."""

    queuedAt: str | None
    startedAt: str | None
    signingStartedAt: str | None
    completedAt: str | None
    processingSeconds: float | None = None


class HistoryEntry(_Answer):
    """One status change of a job."""

    at: str | None
    from_: str | None = Field(alias="from")
    to: str | None
    code: str | None
    message: str | None


class JobDetail(JobSummary):
    """`GET /api/jobs/{id}`: the row plus timeline, family, timings and output."""

    originalPath: str | None
    outputPath: str | None
    inputSize: int | None
    inputSha256: str | None
    instance: str | None
    children: list[str]
    timings: Timings
    history: list[HistoryEntry]


class PipelineState(_Answer):
    """`GET /api/pipeline/state`."""

    paused: bool
    reason: str | None
    changedBy: str | None
    changedAt: str | None


class Profile(_Answer):
    """A signing profile without any secret (only where a secret comes from)."""

    name: str
    format: str
    certSource: str
    pfxPath: str | None
    pfxPasswordEnv: str | None
    pkcs11Module: str | None
    pkcs11Thumbprint: str | None
    pkcs11PinEnv: str | None
    verify: bool
    validateCertificate: bool
    policy: dict[str, Any] | None
    policyName: str | None
    policyDocument: str | None
    policyDigest: str | None
    effectivePolicy: str
    encrypt: bool
    enabled: bool
    inputFolder: str | None
    development: bool
    approval: dict[str, Any] | None
    checkCnab240PaymentDates: bool
    method: str
    signers: str
    keyless: bool


class Folder(_Answer):
    """A row of `GET /api/folders`."""

    name: str
    path: str
    status: str = Field(description="Running, Stopped or Unassigned.")
    profileName: str | None
    lastError: str | None
    lastScanAt: str | None
    instance: str


class Event(_Answer):
    """A row of `GET /api/events`."""

    id: int
    at: str | None
    domain: str
    type: str
    message: str
    actor: str | None
    properties: dict[str, Any] | None


class RescanFolder(_Answer):
    """One folder's counts in a rescan."""

    folder: str
    profile: str | None
    scanned: int
    enqueued: int
    ignored: int
    errors: int
    alreadyProcessed: int
    alreadyActive: int
    unassigned: bool
    messages: list[str]


class RescanAnswer(_Answer):
    """`POST /api/rescan`: per-folder rows and totals."""

    folders: list[RescanFolder]
    totals: dict[str, int]


class Cleared(_Answer):
    """`DELETE /api/jobs`: what was cleared."""

    deleted: int
    filesDeleted: int
    foldersDeleted: int
    eventsDeleted: int
    itemsFailed: int
    message: str
