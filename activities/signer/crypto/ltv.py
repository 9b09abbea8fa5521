"""PAdES above B-B: a signature timestamp (B-T), the DSS of validation data (B-LT), a document
timestamp (B-LTA), and the renewal that keeps a B-LTA file verifiable (a fresh document
timestamp over refreshed validation data).

The signer's chain is judged before anything is signed: a revoked certificate refuses the
signature, an unreachable responder fails it, both with their own codes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from io import BytesIO

from asn1crypto import cms, x509
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.general import SigningError
from pyhanko.sign.signers.pdf_signer import PdfTimeStamper
from pyhanko.sign.validation import async_add_validation_info
from pyhanko.sign.validation.generic_cms import extract_certs_for_validation
from pyhanko_certvalidator.errors import ValidationError

from . import _pyhanko_speedups, revocation
from ._input import PDF_MALFORMED
from .errors import ErrorCode, SignerCryptoError
from .levels import SignatureLevel
from .pades import async_sign_pades, bytes_reserved_for
from .policy import SignaturePolicy
from .signer import LoadedSigner
from .timestamps import FailoverTimeStamper

# The signature-time-stamp attribute around a token: attribute type, SET, SEQUENCE framing.
_TOKEN_FRAMING = 64


@dataclass(frozen=True)
class LevelOptions:
    """What a level above B-B needs: the TSAs, trust anchors, the responders' timeout."""

    level: SignatureLevel
    stamper: FailoverTimeStamper | None
    anchors: tuple[x509.Certificate, ...] = ()
    revocation_timeout: float = 10.0
    md_algorithm: str = "sha256"


@dataclass(frozen=True)
class Signed:
    """The signed bytes and what went into them (for the job's history)."""

    data: bytes
    detail: str = ""
    # Expiry of the certificate of the TSA behind the last document timestamp (B-LTA).
    archive_expiry: dt.datetime | None = None


def signer_chain(signer: LoadedSigner) -> list[x509.Certificate]:
    """The signing certificate first, then what the signer carries for its chain."""
    cms_signer = signer.cms_signer
    return [cms_signer.signing_cert, *(c for c in cms_signer.cert_registry
                                       if c != cms_signer.signing_cert)]


def _anchors(options: LevelOptions, *certs: x509.Certificate) -> list[x509.Certificate]:
    # The configured roots, plus self-signed roots that came with the signer or a token: they
    # are trusted here only to find where a chain ends, the verify step judges trust.
    found = [c for c in certs if c.self_signed in ("maybe", "yes")]
    return list(dict.fromkeys([*options.anchors, *found]))


async def token_size(stamper: FailoverTimeStamper, md_algorithm: str) -> int:
    """Bytes a timestamp token adds to the CMS (one real request per stamper, then cached)."""
    return len((await stamper.async_dummy_response(md_algorithm)).dump()) + _TOKEN_FRAMING


async def async_sign_pades_level(
    pdf: bytes, signer: LoadedSigner, options: LevelOptions, *,
    policy: SignaturePolicy | None = None, bytes_reserved: int | None = None,
) -> Signed:
    """Sign `pdf` at `options.level`; B-B is exactly `async_sign_pades`.

    `bytes_reserved` defaults to the signer's reserve plus, above B-B, a timestamp token.
    """
    level = options.level
    if not level.timestamped:
        return Signed(await async_sign_pades(pdf, signer, policy=policy,
                                             bytes_reserved=bytes_reserved))
    stamper = options.stamper
    assert stamper is not None, "a timestamped level needs TSAs"
    chain = signer_chain(signer)
    evidence = None
    if level.long_term:
        # Before the signature exists (or a TSA is asked): a revoked certificate never signs.
        evidence = await revocation.checked(chain, _anchors(options, *chain),
                                            timeout=options.revocation_timeout)
    if bytes_reserved is None:
        # Hex characters: two per byte of the token the signature will carry.
        bytes_reserved = (bytes_reserved_for(signer, policy)
                          + 2 * await token_size(stamper, options.md_algorithm))
    signed = await async_sign_pades(pdf, signer, policy=policy, bytes_reserved=bytes_reserved,
                                    timestamper=stamper, md_algorithm=options.md_algorithm)
    detail = f"{level.value}: timestamp from {stamper.answered_by}"
    if evidence is None:
        return Signed(signed, detail)
    reader = _reader(signed)
    embedded = reader.embedded_regular_signatures[-1]
    tsa = _token_chain(embedded.signer_info)
    tsa_evidence = await revocation.checked(tsa, _anchors(options, *tsa, *chain),
                                            timeout=options.revocation_timeout)
    evidence.merge(tsa_evidence)
    signed = await _with_dss(embedded, evidence, _anchors(options, *chain, *tsa))
    detail += f"; revocation data: {evidence.summary()}"
    if level is not SignatureLevel.B_LTA:
        return Signed(signed, detail)
    archived = await _document_timestamp(signed, stamper, options.md_algorithm)
    return Signed(archived, detail + f"; document timestamp from {stamper.answered_by}",
                  archive_expiry=last_timestamp_expiry(archived))


def _reader(pdf: bytes) -> PdfFileReader:
    _pyhanko_speedups.install()
    return PdfFileReader(BytesIO(pdf), strict=False)


def _token_chain(signer_info: cms.SignerInfo) -> list[x509.Certificate]:
    """The TSA's certificate and chain, from a signature's timestamp token."""
    token = signer_info["unsigned_attrs"]
    for attribute in token:
        if attribute["type"].native == "signature_time_stamp_token":
            signed_data = attribute["values"][0]["content"]
            certs = extract_certs_for_validation(signed_data)
            return [certs.signer_cert, *certs.other_certs]
    raise SignerCryptoError(ErrorCode.SIGNING_FAILED, "the signature carries no timestamp")


async def _with_dss(embedded, evidence: revocation.RevocationEvidence,
                    anchors: Sequence[x509.Certificate]) -> bytes:
    out = BytesIO()
    try:
        await async_add_validation_info(embedded, evidence.context(anchors), output=out)
    except (ValidationError, SigningError) as exc:
        raise SignerCryptoError(ErrorCode.REVOCATION_UNAVAILABLE,
                                f"validation data could not be embedded: {exc}") from None
    return out.getvalue()


async def _document_timestamp(pdf: bytes, stamper: FailoverTimeStamper,
                              md_algorithm: str) -> bytes:
    writer = IncrementalPdfFileWriter(BytesIO(pdf), strict=False)
    out = BytesIO()
    await PdfTimeStamper(stamper).async_timestamp_pdf(writer, md_algorithm, output=out)
    return out.getvalue()


def last_timestamp_expiry(pdf: bytes) -> dt.datetime | None:
    """When the certificate of the TSA behind the newest document timestamp expires."""
    try:
        stamps = _reader(pdf).embedded_timestamp_signatures
    except PDF_MALFORMED:
        return None
    if not stamps:
        return None
    tsa_cert = extract_certs_for_validation(stamps[-1].signed_data).signer_cert
    return tsa_cert["tbs_certificate"]["validity"]["not_after"].native


async def async_renew_archive(pdf: bytes, options: LevelOptions) -> Signed:
    """A fresh document timestamp over the newest one's refreshed validation data (B-LTA)."""
    stamper = options.stamper
    assert stamper is not None, "renewal needs TSAs"
    try:
        reader = _reader(pdf)
        stamps = reader.embedded_timestamp_signatures
    except PDF_MALFORMED as exc:
        raise SignerCryptoError(ErrorCode.DOCUMENT_CORRUPT, f"cannot parse PDF: {exc}") from None
    if not stamps:
        raise SignerCryptoError(ErrorCode.DOCUMENT_UNSUPPORTED,
                                "not a B-LTA document: it has no document timestamp")
    certs = extract_certs_for_validation(stamps[-1].signed_data)
    tsa = [certs.signer_cert, *certs.other_certs]
    evidence = await revocation.checked(tsa, _anchors(options, *tsa),
                                        timeout=options.revocation_timeout)
    out = BytesIO()
    try:
        await PdfTimeStamper(stamper).async_update_archival_timestamp_chain(
            reader, evidence.context(_anchors(options, *tsa)), in_place=False, output=out,
            default_md_algorithm=options.md_algorithm)
    except (ValidationError, SigningError) as exc:
        raise SignerCryptoError(ErrorCode.REVOCATION_UNAVAILABLE,
                                f"the last document timestamp can't be extended: {exc}") from None
    renewed = out.getvalue()
    return Signed(renewed, f"document timestamp from {stamper.answered_by}; revocation data: "
                           f"{evidence.summary()}", archive_expiry=last_timestamp_expiry(renewed))
