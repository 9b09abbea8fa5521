"""In-process verification of PAdES, CAdES and XAdES signatures against given trust roots."""

from base64 import b64decode
from collections.abc import Sequence
from dataclasses import dataclass
from io import BytesIO

from asn1crypto import cms
from cryptography import x509
from pyhanko.keys.internal import translate_pyca_cryptography_cert_to_asn1
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.general import NonexistentAttributeError, find_unique_cms_attribute
from pyhanko.sign.validation import async_validate_detached_cms, async_validate_pdf_signature
from pyhanko.sign.validation.status import StandardCMSSignatureStatus
from pyhanko_certvalidator import ValidationContext
from signxml.exceptions import InvalidCertificate, InvalidInput, InvalidSignature
from signxml.util import X509CertChainVerifier, namespaces
from signxml.xades import XAdESVerifier

from . import _pyhanko_speedups
from ._input import PDF_MALFORMED
from ._sync import run_sync
from .errors import ErrorCode, SignerCryptoError
from .policy import SignaturePolicy
from .xades import parse_xml, policy_identifier


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of a verification: `ok`, a human reason, and a stable code when not ok."""

    ok: bool
    reason: str
    code: ErrorCode | None = None
    signer_subject: str | None = None
    signatures: int = 0


def _fail(code: ErrorCode, reason: str, signer_subject: str | None = None) -> VerifyResult:
    return VerifyResult(ok=False, reason=reason, code=code, signer_subject=signer_subject)


def _context(trust_roots: Sequence[x509.Certificate]) -> ValidationContext:
    # No fetching: verification must not reach the network (AIA, OCSP, CRL) from a worker.
    return ValidationContext(
        trust_roots=[translate_pyca_cryptography_cert_to_asn1(c) for c in trust_roots],
        allow_fetching=False,
        revocation_mode="soft-fail",
    )


def _cms_policy_problem(
    signer_info: cms.SignerInfo, expected: SignaturePolicy | None
) -> str | None:
    if expected is None:
        return None
    try:
        spi = find_unique_cms_attribute(signer_info["signed_attrs"], "signature_policy_identifier")
    except NonexistentAttributeError:
        return "signature carries no signature-policy-identifier"
    if spi.name != "signature_policy_id":
        return "signature declares an implied policy"
    policy_id = spi.chosen
    digest = policy_id["sig_policy_hash"]
    if policy_id["sig_policy_id"].dotted != expected.oid:
        return f"policy {policy_id['sig_policy_id'].dotted} is not {expected.oid}"
    if (
        digest["digest_algorithm"]["algorithm"].native != expected.hash_algorithm
        or digest["digest"].native != expected.hash_value
    ):
        return f"policy {expected.oid} hash does not match"
    return None


def _subject(status: StandardCMSSignatureStatus) -> str:
    # RFC 4514, the same form XAdES results and the certificate tooling use.
    return x509.load_der_x509_certificate(status.signing_cert.dump()).subject.rfc4514_string()


def _judge_cms(status: StandardCMSSignatureStatus, validate_chain: bool) -> VerifyResult | None:
    subject = _subject(status)
    if not status.intact:
        return _fail(ErrorCode.SIGNATURE_INVALID, "content digest does not match", subject)
    if not status.valid:
        return _fail(ErrorCode.SIGNATURE_INVALID, "signature value does not verify", subject)
    if validate_chain and not status.trusted:
        why = status.trust_problem_indic.name if status.trust_problem_indic else "unknown"
        return _fail(ErrorCode.SIGNATURE_UNTRUSTED, f"certificate not trusted ({why})", subject)
    return None


async def async_verify_pades(
    pdf: bytes,
    *,
    trust_roots: Sequence[x509.Certificate],
    validate_chain: bool = True,
    expected_policy: SignaturePolicy | None = None,
) -> VerifyResult:
    """Verify every signature in a PDF; ok only if all verify and nothing unsigned was added."""
    if not pdf:
        return _fail(ErrorCode.DOCUMENT_EMPTY, "PDF is empty")
    _pyhanko_speedups.install()
    try:
        sigs = PdfFileReader(BytesIO(pdf), strict=False).embedded_regular_signatures
    except PDF_MALFORMED as exc:
        return _fail(ErrorCode.DOCUMENT_CORRUPT, f"cannot parse PDF: {exc}")
    if not sigs:
        return _fail(ErrorCode.SIGNATURE_MISSING, "PDF has no signature")
    context = _context(trust_roots)
    subject = None
    for sig in sigs:
        try:
            status = await async_validate_pdf_signature(sig, signer_validation_context=context)
        except PDF_MALFORMED as exc:
            return _fail(ErrorCode.SIGNATURE_INVALID, f"{sig.field_name}: unreadable ({exc})")
        if (failed := _judge_cms(status, validate_chain)) is not None:
            return _fail(failed.code, f"{sig.field_name}: {failed.reason}", failed.signer_subject)
        subject = _subject(status)
        if not (status.docmdp_ok or status.modification_level is None):
            level = status.modification_level.name if status.modification_level else "unknown"
            return _fail(
                ErrorCode.SIGNATURE_INVALID,
                f"{sig.field_name}: document changed after signing ({level})",
                subject,
            )
        if problem := _cms_policy_problem(sig.signer_info, expected_policy):
            return _fail(ErrorCode.SIGNATURE_POLICY_MISMATCH, problem, subject)
    return VerifyResult(
        ok=True,
        reason=f"{len(sigs)} signature(s) valid",
        signer_subject=subject,
        signatures=len(sigs),
    )


def verify_pades(
    pdf: bytes,
    *,
    trust_roots: Sequence[x509.Certificate],
    validate_chain: bool = True,
    expected_policy: SignaturePolicy | None = None,
) -> VerifyResult:
    """Synchronous `async_verify_pades`."""
    return run_sync(
        async_verify_pades(
            pdf,
            trust_roots=trust_roots,
            validate_chain=validate_chain,
            expected_policy=expected_policy,
        )
    )


def _load_signed_data(signature: bytes) -> cms.SignedData:
    try:
        info = cms.ContentInfo.load(signature)
        if info["content_type"].native != "signed_data":
            raise ValueError(f"content type is {info['content_type'].native}")
        signed_data = info["content"]
        signed_data["signer_infos"][0]["signature"].native  # noqa: B018  (parse eagerly)
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise SignerCryptoError(ErrorCode.DOCUMENT_CORRUPT, f"not a CMS signature: {exc}") from exc
    return signed_data


async def async_verify_cades(
    signature: bytes,
    content: bytes,
    *,
    trust_roots: Sequence[x509.Certificate],
    validate_chain: bool = True,
    expected_policy: SignaturePolicy | None = None,
) -> VerifyResult:
    """Verify a detached CAdES signature (`.p7m` DER) over `content`."""
    if not signature:
        return _fail(ErrorCode.SIGNATURE_MISSING, "signature file is empty")
    if not content:
        return _fail(ErrorCode.DOCUMENT_EMPTY, "signed content is empty")
    try:
        signed_data = _load_signed_data(signature)
    except SignerCryptoError as exc:
        return _fail(exc.code, exc.message)
    try:
        status = await async_validate_detached_cms(
            content, signed_data, signer_validation_context=_context(trust_roots)
        )
    except PDF_MALFORMED as exc:
        return _fail(ErrorCode.SIGNATURE_INVALID, f"unreadable signature: {exc}")
    if (failed := _judge_cms(status, validate_chain)) is not None:
        return failed
    subject = _subject(status)
    if problem := _cms_policy_problem(signed_data["signer_infos"][0], expected_policy):
        return _fail(ErrorCode.SIGNATURE_POLICY_MISMATCH, problem, subject)
    return VerifyResult(ok=True, reason="signature valid", signer_subject=subject, signatures=1)


def verify_cades(
    signature: bytes,
    content: bytes,
    *,
    trust_roots: Sequence[x509.Certificate],
    validate_chain: bool = True,
    expected_policy: SignaturePolicy | None = None,
) -> VerifyResult:
    """Synchronous `async_verify_cades`."""
    return run_sync(
        async_verify_cades(
            signature,
            content,
            trust_roots=trust_roots,
            validate_chain=validate_chain,
            expected_policy=expected_policy,
        )
    )


class _InMemoryChainVerifier(X509CertChainVerifier):
    """signxml chain verifier that trusts given certificates instead of a PEM file."""

    def __init__(self, roots: Sequence[x509.Certificate], **kwargs) -> None:
        super().__init__(ca_pem_file="<in-memory>", **kwargs)
        self._roots = list(roots)

    @property
    def store(self):
        return x509.verification.Store(self._roots)


class _TrustingXAdESVerifier(XAdESVerifier):
    def __init__(self, roots: Sequence[x509.Certificate]) -> None:
        super().__init__()
        self._roots = roots

    def get_cert_chain_verifier(self, ca_pem_file, ee_policy, ca_policy):
        return _InMemoryChainVerifier(
            self._roots,
            verification_time=self._get_cert_verification_time(),
            ee_policy=ee_policy,
            ca_policy=ca_policy,
        )


def _embedded_signer_cert(signature: object) -> x509.Certificate | None:
    node = signature.find("ds:KeyInfo/ds:X509Data/ds:X509Certificate", namespaces=namespaces)
    return None if node is None else x509.load_der_x509_certificate(b64decode(node.text))


def _xades_policy_problem(signed_properties, expected: SignaturePolicy | None) -> str | None:
    if expected is None:
        return None
    spid = signed_properties.find(
        ".//xades:SignaturePolicyIdentifier/xades:SignaturePolicyId", namespaces=namespaces
    )
    if spid is None:
        return "signature carries no SignaturePolicyIdentifier"
    identifier = spid.findtext("xades:SigPolicyId/xades:Identifier", namespaces=namespaces)
    if (identifier or "").strip() not in (policy_identifier(expected), expected.oid):
        return f"policy {identifier} is not {expected.oid}"
    method = spid.find("xades:SigPolicyHash/ds:DigestMethod", namespaces=namespaces)
    value = spid.findtext("xades:SigPolicyHash/ds:DigestValue", namespaces=namespaces) or ""
    if method is None or method.get("Algorithm") != expected.xml_digest_uri:
        return f"policy {expected.oid} hash algorithm does not match"
    if b64decode(value) != expected.hash_value:
        return f"policy {expected.oid} hash does not match"
    return None


def verify_xades(
    xml: bytes,
    *,
    trust_roots: Sequence[x509.Certificate],
    validate_chain: bool = True,
    expected_policy: SignaturePolicy | None = None,
) -> VerifyResult:
    """Verify an enveloped XAdES signature with signxml (signature, references, cert digest)."""
    try:
        root = parse_xml(xml)
    except SignerCryptoError as exc:
        return _fail(exc.code, exc.message)
    signature = root.find(".//ds:Signature", namespaces=namespaces)
    if signature is None:
        return _fail(ErrorCode.SIGNATURE_MISSING, "XML has no ds:Signature")
    try:
        signer_cert = _embedded_signer_cert(signature)
    except ValueError as exc:
        return _fail(ErrorCode.SIGNATURE_INVALID, f"embedded certificate unreadable: {exc}")
    if signer_cert is None:
        return _fail(ErrorCode.SIGNATURE_INVALID, "signature carries no X509Certificate")
    subject = signer_cert.subject.rfc4514_string()
    verifier = _TrustingXAdESVerifier(trust_roots)
    # Without chain validation, trust the embedded certificate as-is (integrity check only).
    cert_arg = {} if validate_chain else {"x509_cert": signer_cert}
    try:
        results = verifier.verify(root, **cert_arg)
    except InvalidCertificate as exc:
        return _fail(ErrorCode.SIGNATURE_UNTRUSTED, f"certificate not trusted: {exc}", subject)
    except (InvalidSignature, InvalidInput) as exc:
        return _fail(ErrorCode.SIGNATURE_INVALID, str(exc), subject)
    signed_properties = next(r.signed_xml for r in results if hasattr(r, "signed_properties"))
    if problem := _xades_policy_problem(signed_properties, expected_policy):
        return _fail(ErrorCode.SIGNATURE_POLICY_MISMATCH, problem, subject)
    return VerifyResult(ok=True, reason="signature valid", signer_subject=subject, signatures=1)
