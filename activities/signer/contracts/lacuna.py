"""Contract of the signer's Lacuna Signer methods: profile methods, codes, activity models."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

# A Signer-folder job has no file: its original path names the (document, flow action) pair,
# so the unique index on active original paths keeps one active job per pair.
SIGNER_FOLDER_SCHEME = "lacuna-signer://"


def signer_folder_path(folder_id: str, document_id: str, flow_action_id: str) -> str:
    """`lacuna-signer://<folder>/<document>/<flow action>`."""
    return f"{SIGNER_FOLDER_SCHEME}{folder_id}/{document_id}/{flow_action_id}"


def is_signer_folder_path(path: str) -> bool:
    """Whether a job's original path is a Signer document rather than a file."""
    return path.startswith(SIGNER_FOLDER_SCHEME)


class ProfileMethod(StrEnum):
    """How a profile's jobs are signed."""

    LOCAL = "Local"
    LACUNA_SIGNER = "LacunaSigner"
    SIGNER_FOLDER = "SignerFolder"


class ProfileSigners(StrEnum):
    """Who signs a profile's jobs: its own key's holder, or (KEYLESS) its approvers."""

    HOLDER = "Holder"
    APPROVERS = "Approvers"


class RemoteState(StrEnum):
    """Where a dispatched document stands, as the workflow needs to know it."""

    WAITING = "waiting"
    CONCLUDED = "concluded"
    FAILED = "failed"
    # The job row left AwaitingSigner (canceled, cleared): the workflow just ends.
    GONE = "gone"


class LacunaErrorCode(StrEnum):
    """Stable codes of the Lacuna Signer methods."""

    REFUSED = "signer.refused"
    EXPIRED = "signer.expired"
    CANCELED_REMOTELY = "signer.canceled-remotely"
    TIMEOUT = "signer.timeout"
    DISPATCH_FAILED = "signer.dispatch-failed"
    DOWNLOAD_FAILED = "signer.download-failed"
    NOT_CONFIGURED = "signer.not-configured"
    FOLDER_INTERRUPTED = "signer-folder.interrupted"
    FOLDER_NO_ACTION = "signer-folder.no-action"
    FOLDER_MOVED_ON = "signer-folder.moved-on"
    FOLDER_NOT_FOUND = "signer-folder.folder-not-found"
    FOLDER_UPLOAD_FAILED = "signer-folder.upload-failed"
    # KEYLESS: the concluded document lacks a signature of an approver whose action is done.
    APPROVER_SIGNATURE_MISSING = "signer.approver-signature-missing"


class CheckRemoteInput(BaseModel):
    """Ask the Signer where a dispatched job's document stands."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    waited_seconds: float = 0.0


class RemoteStatus(BaseModel):
    """The answer of a status check, and when to ask again."""

    model_config = ConfigDict(frozen=True)

    state: RemoteState
    document_id: str | None = None
    remote_status: str | None = None
    poll_seconds: float = 30.0
    max_wait_seconds: float = 30 * 24 * 3600.0


class FinishRemoteInput(BaseModel):
    """Download a concluded document and run verify -> encrypt -> promote; or fail the job."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    failure_code: str | None = None
    failure_message: str | None = None


class CancelRemoteInput(BaseModel):
    """Cancel a dispatched document on the Signer, best effort, once the job is Canceled."""

    model_config = ConfigDict(frozen=True)

    job_id: str
    # None: the cancel came before the first status read; the job row knows it.
    document_id: str | None = None


class SignerWebhook(BaseModel):
    """A Signer webhook relayed to the waiting workflow (the signal only wakes it up)."""

    model_config = ConfigDict(frozen=True)

    event_type: str
    document_id: str

