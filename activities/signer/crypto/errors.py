"""Stable error codes raised by the signer crypto library."""

from enum import StrEnum


class ErrorCode(StrEnum):
    """Stable, machine-readable failure codes; never rename a value."""

    DOCUMENT_EMPTY = "document.empty"
    DOCUMENT_CORRUPT = "document.corrupt"
    DOCUMENT_UNSUPPORTED = "document.unsupported"
    SIGNATURE_MISSING = "signature.missing"
    SIGNATURE_INVALID = "signature.invalid"
    SIGNATURE_UNTRUSTED = "signature.untrusted"
    SIGNATURE_POLICY_MISMATCH = "signature.policy-mismatch"
    SIGNING_FAILED = "signing.failed"
    SIGNING_RESERVE_TOO_SMALL = "signing.reserve-too-small"
    CERTIFICATE_LOAD_FAILED = "certificate.load-failed"
    CERTIFICATE_NOT_FOUND = "certificate.not-found"
    TOKEN_UNAVAILABLE = "token.unavailable"
    # Levels above B-B: no configured TSA answered; no OCSP or CRL answered for a
    # certificate; a certificate of the signer's chain is revoked.
    TIMESTAMP_UNAVAILABLE = "signature.timestamp-unavailable"
    REVOCATION_UNAVAILABLE = "signature.revocation-unavailable"
    CERTIFICATE_REVOKED = "signature.certificate-revoked"
    # A remote signing service (CSC API) refused the request, or did not answer in time.
    REMOTE_SIGNER_REFUSED = "signature.remote-signer-refused"
    REMOTE_SIGNER_UNAVAILABLE = "signature.remote-signer-unavailable"
    ENCRYPTION_NOT_BSENC = "encryption.not-bsenc"
    ENCRYPTION_UNSUPPORTED_VERSION = "encryption.unsupported-version"
    ENCRYPTION_TRUNCATED = "encryption.truncated"
    ENCRYPTION_AUTH_FAILED = "encryption.auth-failed"
    ENCRYPTION_BAD_SALT = "encryption.bad-salt"


# Only a token that is busy or unplugged can succeed on a later attempt; every other code
# describes the input or the configuration, which a retry does not change.
RETRYABLE: frozenset[ErrorCode] = frozenset({ErrorCode.TOKEN_UNAVAILABLE})


class SignerCryptoError(Exception):
    """A failure with a stable code and a human-readable message."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    @property
    def retryable(self) -> bool:
        """Whether the same call may succeed if tried again."""
        return self.code in RETRYABLE
