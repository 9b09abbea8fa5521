"""The signer's error table: each code a door refuses with, its HTTP and gRPC status."""

from __future__ import annotations

from activities.signer.contracts.approvals import ApprovalErrorCode
from activities.signer.contracts.jobs import SignerErrorCode
from shared.errors import ErrorTable, EsteiraError, Refusal

SIGNER_ERRORS = ErrorTable({
    SignerErrorCode.JOB_NOT_FOUND: Refusal.NOT_FOUND,
    SignerErrorCode.JOB_FILE_NOT_FOUND: Refusal.NOT_FOUND,
    SignerErrorCode.PROFILE_NOT_FOUND: Refusal.NOT_FOUND,
    SignerErrorCode.FOLDER_NOT_FOUND: Refusal.NOT_FOUND,
    SignerErrorCode.JOB_ALREADY_ACTIVE: Refusal.CONFLICT,
    SignerErrorCode.JOB_NOT_QUEUED: Refusal.CONFLICT,
    SignerErrorCode.JOB_NOT_FAILED: Refusal.CONFLICT,
    SignerErrorCode.JOB_INPUT_MISSING: Refusal.CONFLICT,
    SignerErrorCode.JOB_REJECTED_NOT_RETRIABLE: Refusal.CONFLICT,
    SignerErrorCode.FILE_ALREADY_PROCESSED: Refusal.CONFLICT,
    SignerErrorCode.PIPELINE_RACE_LOST: Refusal.STALE,
    SignerErrorCode.INSTANCE_NOT_FOUND: Refusal.NOT_FOUND,
    SignerErrorCode.INSTANCE_CLUSTER_DISABLED: Refusal.CONFLICT,
    SignerErrorCode.UPLOAD_DISABLED: Refusal.CONFLICT,
    SignerErrorCode.PROFILE_DISABLED: Refusal.CONFLICT,
    SignerErrorCode.UPLOAD_TOO_LARGE: Refusal.TOO_LARGE,
    SignerErrorCode.INPUT_INVALID_NAME: Refusal.INVALID,
    SignerErrorCode.PROFILE_INVALID: Refusal.INVALID,
    SignerErrorCode.PROFILE_PKCS11_MODULE_NOT_ALLOWED: Refusal.INVALID,
    SignerErrorCode.PROFILE_FOLDER_NOT_CONFIGURED: Refusal.INVALID,
    SignerErrorCode.PROFILE_EXISTS: Refusal.EXISTS,
    SignerErrorCode.PROFILE_FOLDER_TAKEN: Refusal.CONFLICT,
    SignerErrorCode.PROFILE_FOLDER_STILL_ASSIGNED: Refusal.CONFLICT,
    ApprovalErrorCode.INVALID_TOKEN: Refusal.UNAUTHENTICATED,
    ApprovalErrorCode.FORBIDDEN: Refusal.FORBIDDEN,
    ApprovalErrorCode.ALREADY_DECIDED: Refusal.CONFLICT,
    ApprovalErrorCode.NOT_AWAITING: Refusal.CONFLICT,
    ApprovalErrorCode.NO_PREVIEW: Refusal.NOT_FOUND,
    ApprovalErrorCode.CONTENT_CHANGED: Refusal.CONFLICT,
})


def signer_error(code: SignerErrorCode | ApprovalErrorCode, message: str) -> EsteiraError:
    """An `EsteiraError` refused as the signer's table says."""
    return SIGNER_ERRORS.error(code, message)
