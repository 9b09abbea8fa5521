"""pyHanko's validators, run with revocation checking on and the clock moved forward.

Two readings of "still valid after the signer's certificate expired":
- `embedded_evidence_valid`: the signer's certificate judged at the signature timestamp's
  time on what the file carries only (nothing fetched for it, revocation required); the
  timestamp's TSA, still in service, judged at `at` by its responders as of `at`. B-LT and
  B-LTA pass; B-T carries no revocation data, B-B no trusted time.
- `ades_status`: ETSI EN 319 102-1 AdES-LTA validation (`ades_lta_validation`) at `at`, the
  responders answering as they would then (certomancer's fake-time header). Only B-LTA
  reaches PASSED: its document timestamp is the proof of existence of the validation data.
"""

from __future__ import annotations

import datetime as dt
from io import BytesIO

import aiohttp
from asn1crypto import x509
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import async_validate_pdf_signature
from pyhanko.sign.validation.ades import ades_lta_validation
from pyhanko.sign.validation.dss import DocumentSecurityStore
from pyhanko.sign.validation.errors import NoDSSFoundError
from pyhanko.sign.validation.policy_decl import (
    PdfSignatureValidationSpec,
    RevinfoOnlineFetchingRule,
    RevocationInfoGatheringSpec,
    SignatureValidationSpec,
)
from pyhanko_certvalidator import ValidationContext
from pyhanko_certvalidator.context import CertValidationPolicySpec
from pyhanko_certvalidator.fetchers.aiohttp_fetchers import AIOHttpFetcherBackend
from pyhanko_certvalidator.ltv.types import ValidationTimingInfo
from pyhanko_certvalidator.policy_decl import REQUIRE_REVINFO, CertRevTrustPolicy
from pyhanko_certvalidator.registry import SimpleTrustManager

FAKE_TIME_HEADER = "X-Certomancer-Fake-Time"


def _signature(pdf: bytes):
    reader = PdfFileReader(BytesIO(pdf), strict=False)
    return reader, reader.embedded_regular_signatures[0]


def signature_time(pdf: bytes) -> dt.datetime | None:
    """The signature timestamp's genTime (None: no timestamp)."""
    _, sig = _signature(pdf)
    attrs = sig.signer_info["unsigned_attrs"]
    for attribute in attrs if attrs.native is not None else ():
        if attribute["type"].native == "signature_time_stamp_token":
            content = attribute["values"][0]["content"]["encap_content_info"]["content"]
            return content.parsed["gen_time"].native
    return None


async def embedded_evidence_valid(pdf: bytes, root: x509.Certificate, at: dt.datetime) -> bool:
    """Valid at `at` with the signer judged on the file's own evidence (revocation required)."""
    reader, sig = _signature(pdf)
    signed_at = signature_time(pdf) or at
    offline = {"trust_roots": [root], "allow_fetching": False, "revocation_mode": "hard-fail",
               "moment": signed_at}
    try:
        signer_context = DocumentSecurityStore.read_dss(reader).as_validation_context(offline)
    except NoDSSFoundError:  # nothing embedded: nothing to judge the signer with
        signer_context = ValidationContext(ocsps=[], crls=[], **offline)
    async with aiohttp.ClientSession(headers={FAKE_TIME_HEADER: at.isoformat()}) as session:
        tsa_context = ValidationContext(
            trust_roots=[root], moment=at, revocation_mode="hard-fail", allow_fetching=True,
            fetcher_backend=AIOHttpFetcherBackend(session))
        status = await async_validate_pdf_signature(sig, signer_validation_context=signer_context,
                                                    ts_validation_context=tsa_context)
    return bool(status.bottom_line)


async def ades_status(pdf: bytes, root: x509.Certificate, at: dt.datetime):
    """The AdES-LTA indication at `at`, responders queried as of `at`."""
    _, sig = _signature(pdf)
    async with aiohttp.ClientSession(headers={FAKE_TIME_HEADER: at.isoformat()}) as session:
        spec = PdfSignatureValidationSpec(SignatureValidationSpec(
            cert_validation_policy=CertValidationPolicySpec(
                trust_manager=SimpleTrustManager.build(trust_roots=[root]),
                revinfo_policy=CertRevTrustPolicy(REQUIRE_REVINFO)),
            revinfo_gathering_policy=RevocationInfoGatheringSpec(
                online_fetching_rule=RevinfoOnlineFetchingRule.ALWAYS_FETCH,
                fetcher_backend=AIOHttpFetcherBackend(session))))
        result = await ades_lta_validation(sig, spec,
                                           timing_info=ValidationTimingInfo(at, at, False))
    return result.ades_subindic
