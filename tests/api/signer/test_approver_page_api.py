"""The approver's page and what it reads: the e-mail's link, the view, the first-page preview."""

from __future__ import annotations

import shutil
import uuid

import pytest

from activities.signer.crypto.samples import make_pdf
from tests.support.approvals import hold

SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])
BASE = "https://esteira.example.com/"


@pytest.fixture(autouse=True)
def _own_task_queues(settings):
    settings.pipeline.task_queue_suffix = f"-api-{uuid.uuid4().hex[:8]}"


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _held(api, **kwargs):
    kwargs.setdefault("data", make_pdf())
    return await hold(api.context.sessions, api.context.settings.storage_root, BASE, **kwargs)


@SQLITE_ONLY
async def test_the_email_links_to_the_page_with_the_token_in_the_fragment(api):
    held = await _held(api)
    body = held.mails["Ana"]
    assert held.link("Ana") == f"{BASE.rstrip('/')}/approve/{held.job.id}#{held.token('Ana')}"
    assert "curl" not in body and "Bearer" not in body
    assert held.token("Ana") != held.token("Bruno")
    # The token in the link is the one the REST endpoints take.
    seen = await api.get(f"/api/approvals/{held.job.id}", headers=_bearer(held.token("Ana")))
    assert seen.status_code == 200, seen.text
    assert (seen.json()["you"], seen.json()["profile"], seen.json()["fileName"]) == (
        "Ana", "aprovacao", "contrato.pdf")


@SQLITE_ONLY
async def test_the_page_is_served_without_credentials_and_names_no_job_data(api):
    held = await _held(api)
    page = await api.get(f"/approve/{held.job.id}")
    assert page.status_code == 200
    assert f'data-job-id="{held.job.id}"' in page.text and "/static/approve.js" in page.text
    assert "contrato.pdf" not in page.text, "job data is only fetched with the token"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"


@SQLITE_ONLY
@pytest.mark.skipif(shutil.which("pdftoppm") is None,
                    reason="poppler-utils (scripts/install-system-deps.sh) renders previews")
async def test_the_preview_is_the_first_page_for_this_jobs_token_only(api):
    held = await _held(api)
    url = f"/api/approvals/{held.job.id}/preview"
    answer = await api.get(url, headers=_bearer(held.token("Bruno")))
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "image/png"
    assert answer.headers["cache-control"] == "no-store"
    assert answer.content.startswith(b"\x89PNG\r\n\x1a\n")
    anonymous = await api.get(url)
    assert (anonymous.status_code, anonymous.json()["code"]) == (401, "approval.invalid-token")
    other = await _held(api)
    foreign = await api.get(url, headers=_bearer(other.token("Ana")))
    assert (foreign.status_code, foreign.json()["code"]) == (403, "approval.forbidden")


@SQLITE_ONLY
async def test_no_preview_for_other_files_and_none_of_a_changed_copy(api):
    text = await _held(api, file_name="folha.rem", data=b"0" * 240 + b"\r\n")
    answer = await api.get(f"/api/approvals/{text.job.id}/preview",
                           headers=_bearer(text.token("Ana")))
    assert (answer.status_code, answer.json()["code"]) == (404, "approval.no-preview")
    changed = await _held(api)
    changed.staged.write_bytes(make_pdf(pages=2))
    answer = await api.get(f"/api/approvals/{changed.job.id}/preview",
                           headers=_bearer(changed.token("Ana")))
    assert (answer.status_code, answer.json()["code"]) == (409, "approval.content-changed")
    changed.staged.unlink()
    answer = await api.get(f"/api/approvals/{changed.job.id}/preview",
                           headers=_bearer(changed.token("Ana")))
    assert (answer.status_code, answer.json()["code"]) == (404, "approval.no-preview")
