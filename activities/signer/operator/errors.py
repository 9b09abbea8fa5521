"""The error operator operations raise: a stable code, a message, the HTTP status."""

from __future__ import annotations

from shared.contracts.signer import SignerErrorCode
from shared.errors import EsteiraError

STATUS = {
    SignerErrorCode.JOB_NOT_FOUND: 404,
    SignerErrorCode.PROFILE_NOT_FOUND: 404,
    SignerErrorCode.FOLDER_NOT_FOUND: 404,
    SignerErrorCode.JOB_ALREADY_ACTIVE: 409,
    SignerErrorCode.JOB_NOT_QUEUED: 409,
    SignerErrorCode.JOB_NOT_FAILED: 409,
    SignerErrorCode.JOB_INPUT_MISSING: 409,
    SignerErrorCode.JOB_REJECTED_NOT_RETRIABLE: 409,
    SignerErrorCode.FILE_ALREADY_PROCESSED: 409,
    SignerErrorCode.PIPELINE_RACE_LOST: 409,
    SignerErrorCode.UPLOAD_DISABLED: 409,
    SignerErrorCode.PROFILE_DISABLED: 409,
    SignerErrorCode.UPLOAD_TOO_LARGE: 413,
    SignerErrorCode.INPUT_INVALID_NAME: 422,
    SignerErrorCode.PROFILE_INVALID: 422,
    SignerErrorCode.PROFILE_PKCS11_MODULE_NOT_ALLOWED: 422,
    SignerErrorCode.PROFILE_FOLDER_NOT_CONFIGURED: 422,
    SignerErrorCode.PROFILE_EXISTS: 409,
    SignerErrorCode.PROFILE_FOLDER_TAKEN: 409,
    SignerErrorCode.PROFILE_FOLDER_STILL_ASSIGNED: 409,
}


def refuse(code: SignerErrorCode, message: str) -> EsteiraError:
    """An EsteiraError with the status this code maps to."""
    return EsteiraError(code, message, status=STATUS.get(code, 409))
