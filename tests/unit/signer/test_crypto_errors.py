"""Error codes are a public contract: values are stable and retryability is explicit."""

from activities.signer.crypto.errors import RETRYABLE, ErrorCode, SignerCryptoError


def test_codes_are_stable():
    assert {c.value for c in ErrorCode} == {
        "document.empty",
        "document.corrupt",
        "document.unsupported",
        "signature.missing",
        "signature.invalid",
        "signature.untrusted",
        "signature.policy-mismatch",
        "signing.failed",
        "signing.reserve-too-small",
        "certificate.load-failed",
        "certificate.not-found",
        "token.unavailable",
        "signature.timestamp-unavailable",
        "signature.revocation-unavailable",
        "signature.certificate-revoked",
        "signature.remote-signer-refused",
        "signature.remote-signer-unavailable",
        "encryption.not-bsenc",
        "encryption.unsupported-version",
        "encryption.truncated",
        "encryption.auth-failed",
        "encryption.bad-salt",
    }


def test_only_token_outages_are_retryable():
    assert {ErrorCode.TOKEN_UNAVAILABLE} == RETRYABLE
    assert SignerCryptoError(ErrorCode.TOKEN_UNAVAILABLE, "busy").retryable
    assert not SignerCryptoError(ErrorCode.SIGNATURE_INVALID, "bad").retryable


def test_message_carries_code():
    assert str(SignerCryptoError(ErrorCode.DOCUMENT_EMPTY, "PDF is empty")) == (
        "document.empty: PDF is empty"
    )
