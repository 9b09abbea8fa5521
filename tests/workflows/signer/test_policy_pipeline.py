"""The pipeline signs under a configured ICP-Brasil policy and its verification finds it."""

from __future__ import annotations

import io

from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.general import find_unique_cms_attribute

from activities.signer.contracts.jobs import JobStatus, SignatureFormat, SignerErrorCode
from activities.signer.crypto.policy_catalogue import catalogue_policy
from activities.signer.crypto.samples import make_pdf
from tests.support.policy_documents import write_policy
from tests.support.profiles import update_default_profile


async def test_a_pdf_is_signed_and_verified_under_the_profiles_pades_ad_rb(signer, tmp_path):
    entry = catalogue_policy("AD-RB", SignatureFormat.PADES)
    path, digest, inner = write_policy(tmp_path, entry)
    await update_default_profile(signer, format="pades", policy_name="AD-RB",
                                 policy_document=str(path), policy_digest=digest)
    job = await signer.wait_for((await signer.enqueue(signer.drop("a.pdf", make_pdf()))).job_id)
    assert job.status == JobStatus.COMPLETED.value, job.error_message
    # Verifying checked the policy (a signature without it fails signature.policy-mismatch).
    assert any(h.to_status == "Verifying" for h in await signer.history(job.id))
    output = (signer.settings.storage_root / "output" / "a.signed.pdf").read_bytes()
    [embedded] = PdfFileReader(io.BytesIO(output)).embedded_signatures
    spi = find_unique_cms_attribute(embedded.signer_info["signed_attrs"],
                                    "signature_policy_identifier").chosen
    assert spi["sig_policy_id"].dotted == entry.oid == "2.16.76.1.7.1.11.1.3"
    assert spi["sig_policy_hash"]["digest"].native == inner
    assert spi["sig_policy_qualifiers"][0]["sig_qualifier"].native == entry.uri


async def test_a_document_that_no_longer_matches_fails_the_job_as_degraded(signer, tmp_path):
    entry = catalogue_policy("AD-RB", SignatureFormat.PADES)
    path, digest, _ = write_policy(tmp_path, entry)
    await update_default_profile(signer, format="pades", policy_name="AD-RB",
                                 policy_document=str(path), policy_digest=digest)
    path.write_bytes(path.read_bytes() + b"\0")
    data = make_pdf()
    job = await signer.wait_for((await signer.enqueue(signer.drop("b.pdf", data))).job_id)
    assert (job.status, job.error_code) == (JobStatus.FAILED.value,
                                            SignerErrorCode.PROFILE_DEGRADED.value)
    assert "does not match PolicyDigest" in job.error_message
    assert (signer.inbox / "b.pdf").read_bytes() == data, "nothing was signed or lost"
