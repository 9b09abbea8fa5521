"""Signing jobs in the Temporal UI: the README's queries find them by profile, status, name."""

from __future__ import annotations

import uuid

from activities.signer.contracts.jobs import JobStatus, job_workflow_id
from activities.signer.crypto.samples import make_pdf
from shared.contracts.search_attributes import FILE_NAME, JOB_STATUS, PROFILE, SUMMARY
from tests.support.visibility import cli_listed, listed


async def test_failed_jobs_of_a_profile_are_found_by_the_operators_query(signer, temporal_env):
    client = temporal_env.client
    tag = uuid.uuid4().hex[:8]
    good = (await signer.enqueue(signer.drop(f"ok-{tag}.pdf", make_pdf()))).job_id
    bad = (await signer.enqueue(signer.drop(f"broken-{tag}.pdf", b"%PDF-1.7 not a pdf"))).job_id
    assert (await signer.wait_for(good)).status == JobStatus.COMPLETED
    assert (await signer.wait_for(bad)).status == JobStatus.FAILED
    good_id, bad_id = job_workflow_id(good), job_workflow_id(bad)

    failed = "Profile='default' AND JobStatus='Failed'"
    assert good_id not in await listed(client, failed, {bad_id})
    assert bad_id in await cli_listed(client, failed, {bad_id})
    await listed(client, f"FileName='ok-{tag}.pdf' AND JobStatus='Completed'", {good_id})
    await cli_listed(client, f"FileName STARTS_WITH 'broken-{tag}'", {bad_id})

    described = await client.get_workflow_handle(bad_id).describe()
    attributes = described.typed_search_attributes
    assert (attributes.get(FILE_NAME), attributes.get(PROFILE), attributes.get(JOB_STATUS)) == (
        f"broken-{tag}.pdf", "default", "Failed")
    assert await described.memo_value(SUMMARY) == (
        f"Sign broken-{tag}.pdf with profile default (job {bad})")
