"""The approver's page in headless Chromium: from the e-mail's link to a decision."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Browser, Page, Request, async_playwright, expect
from sqlmodel import select

from activities.signer.crypto.samples import make_pdf
from activities.signer.models.approvals import ApprovalDecision
from services.app import create_app
from tests.api.conftest import make_context
from tests.dashboard.browser import ARTIFACTS, chromium_path, saved_screenshots, served
from tests.support.approvals import Held, hold

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])


class Approvers:
    """The app on loopback, a browser, and one held PDF whose e-mails link to it."""

    def __init__(self, browser: Browser, base: str, context, held: Held) -> None:
        self.browser, self.base, self.context, self.held = browser, base, context, held
        self.requests: list[Request] = []

    async def page(self) -> Page:
        """A fresh tab (its own session storage), every request it makes recorded."""
        page = await self.browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(15_000)
        page.on("request", lambda request: self.requests.append(request))
        return page

    async def decisions(self) -> list[ApprovalDecision]:
        async with self.context.sessions() as session:
            return list((await session.exec(select(ApprovalDecision).where(
                ApprovalDecision.job_id == self.held.job.id))).all())


@pytest_asyncio.fixture
async def approvers(settings, temporal_env) -> AsyncIterator[Approvers]:
    executable = chromium_path()
    settings.pipeline.task_queue_suffix = f"-approver-{uuid.uuid4().hex[:8]}"
    context = await make_context(settings, temporal_env)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        async with served(create_app(context)) as base, async_playwright() as playwright:
            held = await hold(context.sessions, settings.storage_root, base, data=make_pdf())
            browser = await playwright.chromium.launch(executable_path=executable,
                                                       args=["--no-sandbox"])
            try:
                yield Approvers(browser, base, context, held)
            finally:
                await browser.close()
    finally:
        await context.engine.dispose()


async def _shot(page: Page, name: str) -> None:
    await page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
    saved_screenshots.append(ARTIFACTS / f"{name}.png")


async def test_an_approver_reviews_the_file_and_approves_from_the_emails_link(approvers):
    held = approvers.held
    page = await approvers.page()
    await page.goto(held.link("Ana"))
    await expect(page.locator("#a-file")).to_have_text("contrato.pdf")
    await expect(page.locator("#a-profile")).to_have_text("aprovacao")
    await expect(page.locator("#a-sha256")).to_have_text(
        held.mails["Ana"].split("SHA-256 of the file held for signing: ", 1)[1].split()[0])
    await expect(page.locator("#a-rule")).to_have_text(
        "2 of 2 approver(s) must approve; a single rejection stops it.")
    await expect(page.locator("#a-decisions")).to_have_text("No decisions yet.")
    preview = page.get_by_role("img", name="First page of contrato.pdf")
    await expect(preview).to_be_visible()
    assert await preview.evaluate("image => image.naturalWidth") > 0
    # The token left the address bar at once; it is in no URL the browser asked for.
    assert await page.evaluate("window.location.hash") == ""
    token = held.token("Ana")
    assert not [r.url for r in approvers.requests if token in r.url]
    api_calls = [r for r in approvers.requests if "/api/approvals/" in r.url]
    assert api_calls
    for call in api_calls:
        assert (await call.all_headers())["authorization"] == f"Bearer {token}", call.url
    await _shot(page, "approver-page")

    axe = Axe()
    result = await axe.run(page, options={"runOnly": ["wcag2a", "wcag2aa"]})
    assert not [f"{v['id']}: {v['help']}" for v in result.response["violations"]]

    await page.get_by_role("button", name="Approve").click()
    await expect(page.locator("#approval-message")).to_have_text("You approved this file.")
    await expect(page.locator("#a-decisions tr")).to_have_count(1)
    await expect(page.locator("#a-decisions")).to_contain_text("Ana")
    await expect(page.get_by_role("button", name="Approve")).to_be_hidden()
    [decision] = await approvers.decisions()
    assert (decision.approver, decision.decision) == ("Ana", "Approved")
    # A reload in the same tab still knows the approver (the token stayed in this tab).
    await page.reload()
    await expect(page.locator("#approval-message")).to_have_text("You approved this file.")


async def test_a_rejection_needs_a_reason_and_the_page_needs_the_token(approvers):
    held = approvers.held
    page = await approvers.page()
    await page.goto(held.link("Bruno"))
    reject = page.get_by_role("button", name="Reject")
    await expect(reject).to_be_visible()
    await reject.click()
    reason = page.get_by_label("Reason for rejecting (required)")
    assert await reason.evaluate("field => field.matches(':invalid')")
    await reason.fill("   ")
    await reject.click()
    assert await reason.evaluate("field => field.validationMessage") == \
        "Say why you reject this file."
    await expect(page.locator("#a-decisions")).to_have_text("No decisions yet.")
    assert await approvers.decisions() == []
    await reason.fill("valor errado")
    await reject.click()
    await expect(page.locator("#approval-message")).to_have_text("You rejected this file.")
    await expect(page.locator("#a-decisions")).to_contain_text("valor errado")
    await expect(page.locator("#a-state")).to_have_text("Rejected (job AwaitingApproval)")
    [decision] = await approvers.decisions()
    assert (decision.approver, decision.decision, decision.reason) == (
        "Bruno", "Rejected", "valor errado")
    await _shot(page, "approver-rejected")

    # Ana's link now shows a closed request and offers no buttons.
    other = await approvers.page()
    await other.goto(held.link("Ana"))
    await expect(other.locator("#approval-message")).to_have_text(
        "This request is closed (Rejected): no decision is needed.")
    await expect(other.get_by_role("button", name="Approve")).to_be_hidden()

    # Without the fragment (a new tab), or with a forged one, nothing about the job shows.
    bare = await approvers.page()
    await bare.goto(f"{approvers.base}/approve/{held.job.id}")
    await expect(bare.locator("#approval-message")).to_have_text(
        "This link has no approval credential. Open the link from your e-mail again.")
    await expect(bare.locator("#approval-details")).to_be_hidden()
    forged = await approvers.page()
    await forged.goto(f"{approvers.base}/approve/{held.job.id}#not-a-token")
    await expect(forged.locator("#approval-message")).to_have_text(
        "approval.invalid-token: The approver token is not valid.")
    await expect(forged.locator("#approval-details")).to_be_hidden()
