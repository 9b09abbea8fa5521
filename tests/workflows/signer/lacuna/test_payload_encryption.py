"""The signer through an encrypting client: an approver's name, e-mail and CPF stay sealed."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import pytest_asyncio

from activities.signer.contracts.jobs import JobStatus, job_workflow_id
from tests.support.encryption import assert_sealed, encrypting_client, raw_history
from tests.support.lacuna import KEYLESS_APPROVERS
from tests.workflows.signer.lacuna.test_keyless import keyless  # noqa: F401 (the fixture)

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


@pytest_asyncio.fixture
async def temporal_env(temporal_env, settings):
    """The session's dev server, reached (by the harness, its workers and this test) through
    the data converter every process of ours uses."""
    return SimpleNamespace(client=encrypting_client(temporal_env.client, settings))


async def test_a_keyless_refusal_leaves_no_approver_data_in_clear(keyless,  # noqa: F811
                                                                 temporal_env):
    _, job_id, document = await keyless.dispatch("folha.pdf", "ambos")
    refuser = KEYLESS_APPROVERS[1]
    await keyless.act(document, refuser["cpf"], "refuse")
    done = await keyless.signer.wait_for(job_id, timeout=30)
    await keyless.signer.settled(job_id)
    # The refusal names the approver (the job's result carries it back to the workflow).
    assert done.status == JobStatus.CANCELED
    assert done.error_message == f"Rejected by {refuser['name']} at the Lacuna Signer."
    raw = await raw_history(temporal_env.client, job_workflow_id(job_id))
    clear = (f"Rejected by {refuser['name']}", *(a["email"] for a in KEYLESS_APPROVERS),
             *(a["cpf"] for a in KEYLESS_APPROVERS))
    assert_sealed(raw, clear, "the KEYLESS job")
