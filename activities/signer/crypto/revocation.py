"""Revocation evidence at signing: OCSP first, the CRL when OCSP doesn't answer, then a verdict.

For every certificate of a chain but its root, the OCSP responders its AIA names are asked;
only when none gives a usable answer are the CRLs of its distribution points fetched. Nothing
answering is `signature.revocation-unavailable`; pyhanko-certvalidator then judges the chain
against what was collected (hard-fail, no further fetching), and a revoked certificate is
`signature.certificate-revoked`. The same evidence is what B-LT embeds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import aiohttp
from asn1crypto import crl, ocsp, x509
from pyhanko_certvalidator import CertificateValidator, ValidationContext
from pyhanko_certvalidator.authority import AuthorityWithCert
from pyhanko_certvalidator.errors import (
    CRLValidationError,
    OCSPValidationError,
    PathBuildingError,
    PathValidationError,
    RevokedError,
    ValidationError,
)
from pyhanko_certvalidator.fetchers.aiohttp_fetchers import (
    AIOHttpCRLFetcher,
    AIOHttpOCSPFetcher,
)

from .errors import ErrorCode, SignerCryptoError


@dataclass
class RevocationEvidence:
    """What the responders said, and which source answered for each certificate."""

    ocsps: list[ocsp.OCSPResponse] = field(default_factory=list)
    crls: list[crl.CertificateList] = field(default_factory=list)
    certs: list[x509.Certificate] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    def merge(self, other: RevocationEvidence) -> None:
        """Add another chain's evidence (the TSA's) to this one."""
        self.ocsps += other.ocsps
        self.crls += other.crls
        self.certs += [c for c in other.certs if c not in self.certs]
        self.sources.update(other.sources)

    def summary(self) -> str:
        """`OCSP for 2, CRL for 1 certificate(s)`."""
        counts = {kind: list(self.sources.values()).count(kind) for kind in ("OCSP", "CRL")}
        return ", ".join(f"{k} for {n}" for k, n in counts.items() if n) + " certificate(s)"

    def context(self, anchors: Sequence[x509.Certificate]) -> ValidationContext:
        """A context that judges with this evidence only: hard-fail, nothing fetched."""
        return ValidationContext(trust_roots=list(anchors), other_certs=list(self.certs),
                                 ocsps=list(self.ocsps), crls=list(self.crls),
                                 allow_fetching=False, revocation_mode="hard-fail")


def _self_signed(cert: x509.Certificate) -> bool:
    return cert.self_signed in ("maybe", "yes")


def _issuer(cert: x509.Certificate, pool: Iterable[x509.Certificate]) -> x509.Certificate | None:
    return next((c for c in pool if c.subject == cert.issuer and c != cert), None)


async def collect(chain: Sequence[x509.Certificate], anchors: Sequence[x509.Certificate], *,
                  timeout: float) -> RevocationEvidence:
    """Evidence for `chain[0]` and each issuer above it up to an anchor (OCSP, else CRL)."""
    pool = [*chain, *anchors]
    evidence = RevocationEvidence(certs=list(dict.fromkeys(pool)))
    async with aiohttp.ClientSession() as session:
        ocsp_fetcher = AIOHttpOCSPFetcher(session, per_request_timeout=timeout)
        crl_fetcher = AIOHttpCRLFetcher(session, per_request_timeout=timeout)
        cert: x509.Certificate | None = chain[0]
        while cert is not None and not _self_signed(cert) and cert not in anchors:
            issuer = _issuer(cert, pool)
            if issuer is None:
                raise SignerCryptoError(
                    ErrorCode.REVOCATION_UNAVAILABLE,
                    f"no issuer certificate for {cert.subject.human_friendly} in the chain: "
                    "its revocation status can't be asked")
            await _one(cert, issuer, ocsp_fetcher, crl_fetcher, evidence)
            cert = issuer
    return evidence


async def _one(cert: x509.Certificate, issuer: x509.Certificate, ocsp_fetcher: AIOHttpOCSPFetcher,
               crl_fetcher: AIOHttpCRLFetcher, evidence: RevocationEvidence) -> None:
    name = cert.subject.human_friendly
    why = "it names no OCSP responder"
    if cert.ocsp_urls:
        try:
            evidence.ocsps.append(await ocsp_fetcher.fetch(cert, AuthorityWithCert(issuer)))
            evidence.sources[name] = "OCSP"
            return
        except (TimeoutError, OCSPValidationError, aiohttp.ClientError, OSError) as exc:
            why = f"OCSP did not answer ({_cause(exc)})"
    if not cert.crl_distribution_points:
        raise SignerCryptoError(ErrorCode.REVOCATION_UNAVAILABLE,
                                f"no revocation status for {name}: {why}, and it names no CRL")
    try:
        fetched = await crl_fetcher.fetch(cert)
    except (TimeoutError, CRLValidationError, aiohttp.ClientError, OSError) as exc:
        fetched, why = [], f"{why}; CRL did not answer ({_cause(exc)})"
    if not fetched:
        raise SignerCryptoError(ErrorCode.REVOCATION_UNAVAILABLE,
                                f"no revocation status for {name}: {why}")
    evidence.crls += fetched
    evidence.sources[name] = "CRL"


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__ or exc
    if isinstance(inner, aiohttp.ClientResponseError):
        return f"HTTP {inner.status}"
    if isinstance(inner, asyncio.TimeoutError):
        return "timed out"
    return f"{type(inner).__name__}: {inner}".rstrip(": ")


async def judge(chain: Sequence[x509.Certificate], anchors: Sequence[x509.Certificate],
                evidence: RevocationEvidence) -> None:
    """Refuse a chain with a revoked certificate (`signature.certificate-revoked`)."""
    validator = CertificateValidator(chain[0], intermediate_certs=list(chain[1:]),
                                     validation_context=evidence.context(anchors))
    name = chain[0].subject.human_friendly
    try:
        await validator.async_validate_usage(set())
    except RevokedError as exc:
        raise SignerCryptoError(ErrorCode.CERTIFICATE_REVOKED,
                                f"{name}: {exc.failure_msg}") from None
    except PathBuildingError as exc:
        raise SignerCryptoError(ErrorCode.SIGNATURE_UNTRUSTED,
                                f"{name}: no path to a trust root ({exc})") from None
    except (PathValidationError, ValidationError) as exc:
        raise SignerCryptoError(ErrorCode.REVOCATION_UNAVAILABLE,
                                f"{name}: the collected revocation data does not settle its "
                                f"status ({exc})") from None


async def checked(chain: Sequence[x509.Certificate], anchors: Sequence[x509.Certificate], *,
                  timeout: float) -> RevocationEvidence:
    """`collect` then `judge`: the evidence of a chain no certificate of which is revoked."""
    evidence = await collect(chain, anchors, timeout=timeout)
    await judge(chain, anchors, evidence)
    return evidence
