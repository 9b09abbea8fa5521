"""PAdES B-B signing of PDF documents with pyHanko."""

from io import BytesIO

from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.sign import fields, signers
from pyhanko.sign.ades.api import CAdESSignedAttrSpec
from pyhanko.sign.general import SigningError
from pyhanko.sign.timestamps import TimeStamper

from . import _pyhanko_speedups
from ._input import PDF_MALFORMED, require_content
from ._sync import run_sync
from .errors import ErrorCode, SignerCryptoError
from .policy import SignaturePolicy
from .signer import LoadedSigner

# CMS bytes besides certificates, signature value and policy: signed attributes, algorithm
# identifiers and SignerInfo framing (~650 bytes measured), with some room to spare.
_CMS_OVERHEAD = 1024


def bytes_reserved_for(signer: LoadedSigner, policy: SignaturePolicy | None = None) -> int:
    """Hex characters to reserve for this signer's CMS in /Contents (2 per CMS byte).

    A fixed size spares pyHanko the dry-run signature it otherwise makes to estimate it, but
    it must stay tight: pyHanko's reader parses /Contents one character at a time (~2 µs
    each), so every reserved kilobyte costs verification about 4 ms.
    """
    cms_signer = signer.cms_signer
    certs = [cms_signer.signing_cert, *cms_signer.cert_registry]
    cert_bytes = sum(len(cert.dump()) for cert in certs)
    key_bits = getattr(signer.certificate.public_key(), "key_size", 4096)
    policy_bytes = len(policy.to_cms().dump()) if policy else 0
    # ECDSA signatures are DER pairs up to 2 × the key size; RSA ones equal the key size.
    return 2 * (cert_bytes + 2 * (key_bits // 8) + 8 + policy_bytes + _CMS_OVERHEAD)


def _open(pdf: bytes) -> IncrementalPdfFileWriter:
    require_content(pdf, "PDF")
    # Readers accept the header anywhere in the first 1024 bytes (ISO 32000-2 §7.5.2 note).
    if b"%PDF-" not in pdf[:1024]:
        raise SignerCryptoError(ErrorCode.DOCUMENT_CORRUPT, "not a PDF (no %PDF- header)")
    _pyhanko_speedups.install()
    try:
        # Non-strict: real-world PDFs often carry small xref errors that readers tolerate.
        writer = IncrementalPdfFileWriter(BytesIO(pdf), strict=False)
        encrypted = writer.prev.encrypted
        writer.root  # noqa: B018  (forces the catalog to parse, so corruption shows here)
    except PDF_MALFORMED as exc:
        raise SignerCryptoError(ErrorCode.DOCUMENT_CORRUPT, f"cannot parse PDF: {exc}") from exc
    if encrypted:
        raise SignerCryptoError(ErrorCode.DOCUMENT_UNSUPPORTED, "PDF is encrypted")
    return writer


def _free_field_name(writer: IncrementalPdfFileWriter) -> str:
    # A document may already carry signatures (co-signing); never reuse a filled field.
    taken = {name for name, _, _ in fields.enumerate_sig_fields(writer)}
    return next(f"Signature{n}" for n in range(1, len(taken) + 2) if f"Signature{n}" not in taken)


def _metadata(
    field_name: str, policy: SignaturePolicy | None, reason: str | None, md_algorithm: str
) -> signers.PdfSignatureMetadata:
    attrs = CAdESSignedAttrSpec(signature_policy_identifier=policy.to_cms()) if policy else None
    return signers.PdfSignatureMetadata(
        field_name=field_name,
        md_algorithm=md_algorithm,
        subfilter=fields.SigSeedSubFilter.PADES,
        cades_signed_attr_spec=attrs,
        reason=reason,
    )


async def async_sign_pades(
    pdf: bytes,
    signer: LoadedSigner,
    *,
    policy: SignaturePolicy | None = None,
    bytes_reserved: int | None = None,
    reason: str | None = None,
    timestamper: TimeStamper | None = None,
    md_algorithm: str = "sha256",
) -> bytes:
    """Add a PAdES B-B signature (B-T with a `timestamper`) and return the signed PDF.

    `bytes_reserved` defaults to `bytes_reserved_for(signer, policy)`; compute it once per
    signer and pass it in on hot paths (with a timestamper, add the token's size).
    """
    writer = _open(pdf)
    if bytes_reserved is None:
        bytes_reserved = bytes_reserved_for(signer, policy)
    out = BytesIO()
    try:
        await signers.async_sign_pdf(
            writer,
            _metadata(_free_field_name(writer), policy, reason, md_algorithm),
            signer=signer.cms_signer,
            timestamper=timestamper,
            bytes_reserved=bytes_reserved,
            output=out,
        )
    except SigningError as exc:
        code = (
            ErrorCode.SIGNING_RESERVE_TOO_SMALL
            if "larger than expected" in str(exc)
            else ErrorCode.SIGNING_FAILED
        )
        raise SignerCryptoError(code, str(exc)) from exc
    except PDF_MALFORMED as exc:
        raise SignerCryptoError(ErrorCode.DOCUMENT_CORRUPT, f"cannot sign PDF: {exc}") from exc
    return out.getvalue()


def sign_pades(
    pdf: bytes,
    signer: LoadedSigner,
    *,
    policy: SignaturePolicy | None = None,
    bytes_reserved: int | None = None,
    reason: str | None = None,
) -> bytes:
    """Synchronous `async_sign_pades`, for code outside an event loop."""
    return run_sync(
        async_sign_pades(pdf, signer, policy=policy, bytes_reserved=bytes_reserved, reason=reason)
    )
