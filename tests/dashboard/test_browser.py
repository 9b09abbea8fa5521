"""The dashboard in headless Chromium against a real signer: what an operator does all day."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import pytest_asyncio
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Page, async_playwright, expect

from activities.signer.crypto.samples import make_pdf
from services.app import create_app
from shared.settings import InputFolderSettings
from tests.api.conftest import API_KEY, make_context
from tests.dashboard.browser import ARTIFACTS, chromium_path, saved_screenshots, served
from tests.workflows.signer.conftest import signer, signing_pool  # noqa: F401

# One store is enough here: the HTTP tests cover both; a browser run costs seconds.
pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
PAGES = ["/jobs", "/profiles", "/profiles/_new", "/profiles/default", "/folders", "/events",
         "/system", "/pickup", "/sisbajud"]


@pytest.fixture
def chromium() -> str:
    """Debian's Chromium, checked before anything else is started."""
    return chromium_path()


@asynccontextmanager
async def _chromium_on(executable: str, settings, temporal_env) -> AsyncIterator[Page]:
    """A Chromium page on the app served on loopback."""
    context = await make_context(settings, temporal_env)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        async with served(create_app(context)) as base, async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=executable,
                                                       args=["--no-sandbox"])
            page = await browser.new_page(base_url=base,
                                          viewport={"width": 1280, "height": 900})
            page.set_default_timeout(15_000)
            try:
                yield page
            finally:
                await browser.close()
    finally:
        await context.engine.dispose()


@pytest_asyncio.fixture
async def browser_page(chromium, signer, temporal_env  # noqa: F811
                       ) -> AsyncIterator[tuple[Page, object]]:
    """The page next to a running signer worker (uploads get signed)."""
    async with _chromium_on(chromium, signer.settings, temporal_env) as page:
        yield page, signer


@pytest_asyncio.fixture
async def app_page(chromium, settings, temporal_env) -> AsyncIterator[Page]:
    """The page on the app alone (no worker needed)."""
    settings.pipeline.task_queue_suffix = f"-dash-{uuid.uuid4().hex[:8]}"
    async with _chromium_on(chromium, settings, temporal_env) as page:
        yield page


async def _shot(page: Page, name: str) -> None:
    await page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
    saved_screenshots.append(ARTIFACTS / f"{name}.png")


async def _login(page: Page) -> None:
    await page.goto("/jobs")
    await expect(page).to_have_url("/login?next=%2Fjobs")
    await _shot(page, "login")
    await page.get_by_label("Operator").fill("operator")
    await page.get_by_label("Password").fill(API_KEY)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url("/jobs")


async def _upload(page: Page, tmp_path, *names: str) -> list[str]:
    files = []
    for name in names:
        path = tmp_path / name
        path.write_bytes(make_pdf())
        files.append(path)
    await page.goto("/jobs")
    await page.get_by_role("button", name="Upload files").click()
    await page.get_by_label("Signing profile").select_option("default")
    await page.get_by_label("Files", exact=True).set_input_files(files)
    await page.get_by_role("button", name="Send").click()
    links = page.locator(".report li.ok a")
    await expect(links).to_have_count(len(names))
    return [(await link.get_attribute("href")).rsplit("/", 1)[1] for link in await links.all()]


async def _wait_gate(signer, paused: bool) -> None:  # noqa: F811
    """The worker follows the pause row on its next poll; wait until it has (and drained)."""
    while signer.gate.polling == paused or (paused and not signer.gate.drained):
        await asyncio.sleep(0.02)


async def test_operator_day(browser_page, tmp_path):
    page, harness = browser_page
    await _login(page)

    # Upload two files; the live table shows them complete without a reload.
    first, second = await _upload(page, tmp_path, "um.pdf", "dois.pdf")
    await _shot(page, "upload-report")
    await page.goto("/jobs")
    for job_id in (first, second):
        await expect(page.locator(f'tr[data-job-id="{job_id}"]')).to_have_attribute(
            "data-status", "Completed", timeout=60_000)
    await _shot(page, "jobs")
    await page.get_by_role("link", name="um.pdf", exact=True).click()
    await expect(page.get_by_role("heading", name="Timeline")).to_be_visible()
    await _shot(page, "job-detail")
    # The signed output is a plain link the session downloads.
    async with page.expect_download() as download_info:
        await page.get_by_role("link", name="output/um.signed.pdf").click()
    download = await download_info.value
    assert download.suggested_filename == "um.signed.pdf"
    assert (await harness.repository.get(first)).output_path
    with open(await download.path(), "rb") as signed:
        assert signed.read(5) == b"%PDF-"

    # Pause with a reason; a new upload stays Queued, then cancel it through the dialog.
    await page.goto("/system")
    await page.get_by_label("Reason (optional)").fill("Manutenção trimestral")
    await page.get_by_role("button", name="Pause").click()
    await expect(page.locator("#pipeline-state")).to_contain_text("paused")
    await _shot(page, "system-paused")
    await _wait_gate(harness, paused=True)
    (queued,) = await _upload(page, tmp_path, "tres.pdf")
    await page.goto(f"/jobs/{queued}")
    await page.get_by_role("button", name="Cancel").click()
    dialog = page.get_by_role("dialog")
    await expect(dialog).to_contain_text("tres.pdf")
    await expect(dialog).to_contain_text("A canceled job has no Retry")
    await _shot(page, "cancel-dialog")
    await dialog.get_by_role("button", name="Keep job").click()
    await expect(dialog).to_be_hidden()
    assert (await harness.repository.get(queued)).status == "Queued", "Keep job cancels nothing"
    await page.get_by_role("button", name="Cancel").click()
    await dialog.get_by_label("Reason (optional)").fill("wrong batch")
    await dialog.get_by_role("button", name="Cancel job").click()
    await expect(page.locator("h1 .chip")).to_have_text("Canceled")
    job = await harness.repository.get(queued)
    assert job.status == "Canceled"
    assert (await harness.history(queued))[-1].message == "Operator canceled: wrong batch."

    # Resume.
    await page.goto("/system")
    await page.get_by_role("button", name="Resume").click()
    await expect(page.locator("#pipeline-state")).to_contain_text("running")
    events = await harness.events("PipelineResumed")
    assert events and events[0].actor == "operator:operator"

    # Route a folder: the default profile moves from inbox to remessas.
    harness.settings.storage.inputs = [InputFolderSettings(name="inbox"),
                                       InputFolderSettings(name="remessas")]
    await page.goto("/folders")
    remessas = page.locator("article", has=page.get_by_role("heading", name="remessas"))
    await expect(remessas).to_contain_text("no profile")
    await page.goto("/profiles/default")
    await page.get_by_text("Edit behaviour").click()
    await page.get_by_label("Input folder").select_option("remessas")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status")).to_contain_text("Profile default saved.")
    await page.goto("/folders")
    await expect(remessas).to_contain_text("profile default")
    await expect(page.locator("article", has=page.get_by_role("heading", name="inbox"))
                 ).to_contain_text("no profile")
    await _shot(page, "folders")
    assert (await harness.profile()).input_folder == "remessas"

    # Delete one row from /jobs: the dialog, then the notice of what went and what stayed.
    await page.goto("/jobs")
    await page.get_by_role("link", name="Delete dois.pdf…").click()
    dialog = page.get_by_role("dialog")
    await dialog.get_by_label("Reason (optional)").fill("name needed again")
    await dialog.get_by_role("button", name="Delete job").click()
    await expect(page).to_have_url("/jobs")
    await expect(page.get_by_role("status")).to_contain_text(f"Job {second} deleted. Removed:")
    await expect(page.locator(f'tr[data-job-id="{second}"]')).to_have_count(0)
    assert await harness.repository.get(second) is None

    # Clear Jobs through the danger zone's dialog.
    await page.goto("/system")
    await page.get_by_role("button", name="Clear Jobs").click()
    dialog = page.get_by_role("dialog")
    await expect(dialog).to_contain_text("Irreversible")
    await _shot(page, "clear-dialog")
    await dialog.get_by_role("button", name="Clear Jobs").click()
    await expect(page.get_by_role("status")).to_contain_text("Cleared 2 job record(s)")
    await page.goto("/jobs")
    await expect(page.locator("#job-rows")).to_contain_text("No jobs.")

    for path in ("/profiles", "/profiles/_new", "/events", "/pickup", "/sisbajud"):
        await page.goto(path)
        await _shot(page, path.strip("/").replace("/", "-"))


async def test_pickup_board_updates_live(app_page):
    page = app_page
    await _login(page)
    auth = {"X-API-Key": API_KEY}
    school = await (await page.request.post("/api/pickup/schools", headers=auth,
                                            data={"name": "Escola Sol"})).json()
    student = await (await page.request.post("/api/pickup/students", headers=auth, data={
        "school_id": school["id"], "name": "Bia"})).json()
    await page.goto("/pickup")
    await page.get_by_role("link", name="Escola Sol", exact=True).click()
    await expect(page.locator("#live-state")).to_have_text("Live.")
    chip = page.locator(f'tr[data-student-id="{student["id"]}"] .state')
    await expect(chip).to_have_text("AT_SCHOOL")
    arrival = await page.request.post(f"/api/pickup/students/{student['id']}/arrival",
                                      headers=auth)
    assert arrival.ok, await arrival.text()
    # The row changes without a reload: the page's EventSource got StudentStateChanged.
    await expect(chip).to_have_text((await arrival.json())["state"])
    await _shot(page, "pickup-board")


async def test_accessibility_basics(app_page):
    page = app_page
    axe = Axe()
    # The checker itself catches what it is here for.
    await page.set_content('<main><input id="x"><button></button></main>')
    caught = {v["id"] for v in (await axe.run(page)).response["violations"]}
    assert {"label", "button-name"} <= caught, caught
    await _login(page)
    problems = {}
    for path in PAGES:
        await page.goto(path)
        result = await axe.run(page, options={"runOnly": ["wcag2a", "wcag2aa"]})
        found = [f"{v['id']}: {v['help']} ({len(v['nodes'])})"
                 for v in result.response["violations"]]
        if found:
            problems[path] = found
    assert not problems, problems

    # Keyboard only: the main actions are reachable with Tab and dialogs open and close.
    await page.goto("/jobs")
    assert await _tab_to(page, "Upload files")
    await page.keyboard.press("Enter")
    await expect(page.get_by_role("dialog")).to_be_visible()
    await page.keyboard.press("Escape")
    await expect(page.get_by_role("dialog")).to_be_hidden()
    assert await page.evaluate("document.activeElement.textContent") == "Upload files"
    await page.goto("/system")
    assert await _tab_to(page, "Pause")
    assert await _tab_to(page, "Clear Jobs")


async def _tab_to(page: Page, name: str, limit: int = 60) -> bool:
    for _ in range(limit):
        await page.keyboard.press("Tab")
        focused = await page.evaluate("document.activeElement.textContent.trim()")
        if focused == name:
            return True
    return False
