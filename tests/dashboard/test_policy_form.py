"""The profile form edits the signature policy: catalogue name, document path, digest."""

from __future__ import annotations

from activities.signer.models.jobs import SigningProfile
from tests.dashboard.conftest import csrf_of


def _form(token: str, **fields) -> dict:
    return {"csrf_token": token, "input_folder": "inbox", "enabled": "on", "verify": "on",
            "validate_certificate": "on", **fields}


async def test_the_form_sets_the_policy_and_the_page_shows_the_effective_one(operator):
    page = (await operator.get("/profiles/default")).text
    assert '<option value="AD-RB">AD-RB</option>' in page
    assert "<dt>Signature policy</dt><dd>none</dd>" in page
    answer = await operator.post("/profiles/default", data=_form(
        csrf_of(page), format="xades", policy_name="AD-RB",
        policy_document="/etc/esteira/PA_AD_RB_v2_5.xml", policy_digest="ab" * 32))
    assert answer.status_code == 303
    page = (await operator.get("/profiles/default")).text
    assert "Profile default saved." in page
    assert "ICP-Brasil AD-RB v2.5 XAdES (2.16.76.1.7.1.6.2.5)" in page
    assert '<option value="AD-RB" selected>AD-RB</option>' in page
    assert 'value="' + "ab" * 32 + '"' in page
    async with operator.context.sessions() as session:
        row = await session.get(SigningProfile, "default")
    assert (row.policy_name, row.policy_document, row.policy_digest) == (
        "AD-RB", "/etc/esteira/PA_AD_RB_v2_5.xml", "ab" * 32)

    # Clearing the policy in the same form brings `none` back.
    await operator.post("/profiles/default", data=_form(csrf_of(page), format="xades"))
    async with operator.context.sessions() as session:
        row = await session.get(SigningProfile, "default")
    assert (row.policy_name, row.policy_document, row.policy_digest) == (None, None, None)


async def test_a_policy_no_worker_could_honour_is_refused_with_its_code(operator):
    token = csrf_of((await operator.get("/profiles/default")).text)
    answer = await operator.post("/profiles/default", data=_form(
        token, format="auto", policy_name="AD-RB", policy_document="/p.der",
        policy_digest="ab" * 32))
    assert answer.status_code == 303
    page = (await operator.get("/profiles/default")).text
    assert "profile.invalid" in page and "needs a fixed format" in page
    async with operator.context.sessions() as session:
        row = await session.get(SigningProfile, "default")
    assert row.policy_name is None, "a refused save changes nothing"
