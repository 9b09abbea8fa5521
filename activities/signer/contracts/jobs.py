"""Contract of the `signer` domain: queues, workflow ids, states, codes, inputs and results."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from activities.signer.contracts.names import JOBS_TASK_QUEUE, SIGNING_TASK_QUEUE

DOMAIN = "signer"


def task_queues(suffix: str = "") -> tuple[str, str]:
    """(jobs queue, signing queue) of a deployment."""
    return JOBS_TASK_QUEUE + suffix, SIGNING_TASK_QUEUE + suffix


def job_workflow_id(job_id: str) -> str:
    """`signer-job:<job id>`."""
    return f"signer-job:{job_id}"


class JobStatus(StrEnum):
    """The seed's eight job states."""

    QUEUED = "Queued"
    PROCESSING = "Processing"
    VERIFYING = "Verifying"
    COMPLETED = "Completed"
    FAILED = "Failed"
    CANCELED = "Canceled"
    AWAITING_APPROVAL = "AwaitingApproval"
    AWAITING_SIGNER = "AwaitingSigner"


ACTIVE_STATUSES = frozenset({JobStatus.QUEUED, JobStatus.PROCESSING, JobStatus.VERIFYING,
                             JobStatus.AWAITING_APPROVAL, JobStatus.AWAITING_SIGNER})
TERMINAL_STATUSES = frozenset({JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELED})


class FolderStatus(StrEnum):
    """What a folder's watcher is doing (`GET /api/folders` `status`)."""

    STARTING = "Starting"
    RUNNING = "Running"
    UNASSIGNED = "Unassigned"
    STOPPED = "Stopped"
    # The folder can't be listed (missing, permission denied): retried every pass.
    UNAVAILABLE = "Unavailable"
    # No watcher has scanned it within the bound: dead, hung, stopped, or never started.
    NO_SIGNAL = "NoSignal"


class SignatureFormat(StrEnum):
    """How a document is signed."""

    PADES = "Pades"
    CADES = "Cades"
    XADES = "Xades"


class JobSource(StrEnum):
    """Which door a job came through."""

    WATCHER = "watcher"
    UPLOAD = "upload"
    RESCAN = "rescan"
    RETRY = "retry"
    SIGNER_FOLDER = "signer-folder"


class SignerErrorCode(StrEnum):
    """Stable codes of the signer, as the seed names them."""

    JOB_NOT_FOUND = "job.not-found"
    JOB_FILE_NOT_FOUND = "job.file-not-found"
    JOB_NOT_QUEUED = "job.not-queued"
    JOB_NOT_FAILED = "job.not-failed"
    JOB_INPUT_MISSING = "job.input-missing"
    JOB_ALREADY_ACTIVE = "job.already-active"
    FOLDER_NOT_FOUND = "folder.not-found"
    JOB_REJECTED_NOT_RETRIABLE = "job.rejected-not-retriable"
    JOB_INPUT_DIVERGED = "job.input-diverged"
    JOB_INTERRUPTED = "job.interrupted"
    FILE_ALREADY_PROCESSED = "file.already-processed"
    OUTPUT_EXISTS = "output.exists"
    OUTPUT_NAME_TOO_LONG = "output.name-too-long"
    STORAGE_FULL = "storage.full"
    STORAGE_FAILED = "storage.failed"
    INPUT_UNREADABLE = "input.unreadable"
    INPUT_LOCKED = "input.locked"
    INPUT_INVALID_NAME = "input.invalid-name"
    PROFILE_NOT_FOUND = "profile.not-found"
    PROFILE_DISABLED = "profile.disabled"
    PROFILE_DEGRADED = "profile.degraded"
    PROFILE_EXISTS = "profile.exists"
    PROFILE_FOLDER_NOT_CONFIGURED = "profile.folder-not-configured"
    PROFILE_FOLDER_TAKEN = "profile.folder-taken"
    PROFILE_FOLDER_STILL_ASSIGNED = "profile.folder-still-assigned"
    PROFILE_INVALID = "profile.invalid"
    PROFILE_PKCS11_MODULE_NOT_ALLOWED = "profile.pkcs11-module-not-allowed"
    UPLOAD_DISABLED = "upload.disabled"
    UPLOAD_TOO_LARGE = "upload.too-large"
    PIPELINE_RACE_LOST = "pipeline.race-lost"
    INSTANCE_NOT_FOUND = "instance.not-found"
    INSTANCE_CLUSTER_DISABLED = "instance.cluster-disabled"
    SIGNING_FAILED = "signing.failed"


class RunJobInput(BaseModel):
    """Start the `SigningJob` workflow of a job whose row already exists."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    signing_task_queue: str = SIGNING_TASK_QUEUE
    heartbeat_timeout_seconds: float = 30.0


class ProcessJobInput(BaseModel):
    """Claim, stage, sign, verify, encrypt and promote one job."""

    model_config = ConfigDict(frozen=True)

    job_id: str


class JobResult(BaseModel):
    """How a job ended (or that it now waits)."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    status: JobStatus
    error_code: str | None = None
    message: str | None = None
    output_path: str | None = None

