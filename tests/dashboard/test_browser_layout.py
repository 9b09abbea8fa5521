"""The jobs table in headless Chromium: a very long name or error keeps every column on screen."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Page, async_playwright, expect

from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository
from services.app import create_app
from tests.api.conftest import API_KEY, make_context
from tests.dashboard.browser import ARTIFACTS, chromium_path, saved_screenshots, served

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
LONG_NAME = "remessa_" + "x" * 238 + ".pdf"  # 250 characters, no space to break at
LONG_ERROR = ("The signature could not be verified: " + "/".join(["processing"] * 40)
              + " is not where the staged copy was expected.")
# Every header and cell of the table, as a box: left, right, and the text it is for.
BOXES = """() => Array.from(document.querySelectorAll('table.jobs th, table.jobs td')).map(
  (cell) => { const r = cell.getBoundingClientRect();
              return {left: r.left, right: r.right, text: cell.textContent.slice(0, 30)}; })"""


@pytest_asyncio.fixture
async def operator_page(settings, temporal_env) -> AsyncIterator[tuple[Page, object]]:
    """Chromium on the app, every request carrying the API key (the guard's automation door)."""
    executable = chromium_path()
    settings.pipeline.task_queue_suffix = f"-layout-{uuid.uuid4().hex[:8]}"
    context = await make_context(settings, temporal_env)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        async with served(create_app(context)) as base, async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=executable,
                                                       args=["--no-sandbox"])
            page = await browser.new_page(base_url=base, extra_http_headers={
                "X-API-Key": API_KEY})
            page.set_default_timeout(15_000)
            try:
                yield page, context
            finally:
                await browser.close()
    finally:
        await context.engine.dispose()


@pytest.mark.parametrize("width", [1280, 1920])
async def test_a_long_name_and_error_keep_every_column_on_screen(operator_page, width):
    page, context = operator_page
    job = Job(id=str(uuid.uuid4()), file_name=LONG_NAME, original_path=f"/in/{LONG_NAME}",
              source="upload", profile_name="default", format="Pades", status="Failed",
              folder="inbox", error_code="signing.verification-failed",
              error_message=LONG_ERROR)
    await JobRepository(context.sessions).insert(job, "test row")
    await page.set_viewport_size({"width": width, "height": 900})
    await page.goto("/jobs")
    row = page.locator(f'tr[data-job-id="{job.id}"]')
    await expect(row).to_be_visible()
    await page.screenshot(path=ARTIFACTS / f"jobs-long-name-{width}.png", full_page=True)
    saved_screenshots.append(ARTIFACTS / f"jobs-long-name-{width}.png")

    viewport = await page.evaluate("document.documentElement.clientWidth")
    boxes = await page.evaluate(BOXES)
    assert len(boxes) == 16, boxes  # 8 headers, 8 cells of the one row
    off_screen = [b for b in boxes if b["left"] < 0 or b["right"] > viewport]
    assert not off_screen, (viewport, off_screen)
    assert await page.evaluate("document.documentElement.scrollWidth") <= viewport
    # What is cut short is there in full on hover.
    await expect(row.get_by_role("link", name=LONG_NAME, exact=True)).to_have_attribute(
        "title", LONG_NAME)
    await expect(row.locator("[title*='signing.verification-failed']")).to_have_attribute(
        "title", f"signing.verification-failed: {LONG_ERROR}")
