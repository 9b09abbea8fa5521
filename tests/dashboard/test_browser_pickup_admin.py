"""Pickup administration in headless Chromium, without its script: a school, a roster through
its preview, a guardian with a card and a temporary link, an approved person; axe at 1280 and
390 pixels on every page on the way."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Page, async_playwright, expect
from sqlmodel import select

from activities.pickup.models import AuditEntry, Credential, GuardianLink
from services.app import create_app
from tests.api.conftest import API_KEY, make_context
from tests.dashboard.browser import ARTIFACTS, chromium_path, saved_screenshots, served

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
WIDTHS = ({"width": 1280, "height": 900}, {"width": 390, "height": 844})
ROSTER = ("student_registration,student_name,guardian_cpf,guardian_name,link_kind\n"
          "A1,Ana,52998224725,Maria,permanent\n"
          "A2,Beto,,,\n")


@pytest_asyncio.fixture
async def admin_page(settings, temporal_env) -> AsyncIterator[tuple[Page, Page, object]]:
    """A signed-in Chromium page with JavaScript off (forms post), a page with it on for
    axe-core (which runs as a script), and the app's context."""
    executable = chromium_path()
    settings.pipeline.task_queue_suffix = f"-padmin-{uuid.uuid4().hex[:8]}"
    settings.pickup.timers_enabled = False  # no pickup worker: expiry timers would linger
    context = await make_context(settings, temporal_env)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        async with served(create_app(context)) as base, async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=executable,
                                                       args=["--no-sandbox"])
            session = await browser.new_context(base_url=base, java_script_enabled=False,
                                                viewport=WIDTHS[0])
            page = await session.new_page()
            page.set_default_timeout(15_000)
            try:
                await page.goto("/pickup")
                await page.get_by_label("Operator").fill("operator")
                await page.get_by_label("Password").fill(API_KEY)
                await page.get_by_role("button", name="Sign in").click()
                await expect(page).to_have_url("/pickup")
                checker = await (await browser.new_context(
                    base_url=base, storage_state=await session.storage_state())).new_page()
                yield page, checker, context
            finally:
                await browser.close()
    finally:
        await context.engine.dispose()


async def _checked(page: Page, checker: Page, name: str) -> None:
    """The page as the operator sees it, axe-core (WCAG 2 A and AA) clean at both widths."""
    # The same document in a page that runs scripts, at the same address (a posted result
    # such as the roster preview can't be fetched again, so its HTML is carried over).
    await checker.goto(page.url)
    await checker.set_content(await page.content())
    for viewport in WIDTHS:
        await checker.set_viewport_size(viewport)
        result = await Axe().run(checker, options={"runOnly": ["wcag2a", "wcag2aa"]})
        found = [f"{v['id']}: {v['help']} ({len(v['nodes'])})"
                 for v in result.response["violations"]]
        assert not found, (name, viewport["width"], found)
        shot = ARTIFACTS / f"pickup-admin-{name}-{viewport['width']}.png"
        await checker.screenshot(path=shot, full_page=True)
        saved_screenshots.append(shot)


async def _notice(page: Page, text: str) -> None:
    await expect(page.locator("#notices")).to_contain_text(text)


async def test_an_operator_sets_up_a_school_from_the_dashboard(admin_page, tmp_path):
    page, checker, context = admin_page
    await _checked(page, checker, "schools")

    # A school.
    await page.get_by_label("Name").fill("Escola Sol")
    await page.get_by_label("Time zone").fill("America/Sao_Paulo")
    await page.get_by_role("button", name="Create school").click()
    await _notice(page, "School Escola Sol created.")
    school_id = int(page.url.rstrip("/").split("/")[-2])
    await _checked(page, checker, "school")

    # The roster: previewed, nothing written, then applied.
    await page.get_by_role("link", name="Roster import").click()
    await _checked(page, checker, "roster")
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    await page.get_by_label("Roster file").set_input_files(roster)
    await page.get_by_role("button", name="Preview changes").click()
    await expect(page.locator("#roster-verdict")).to_contain_text("Preview only")
    await _checked(page, checker, "roster-preview")
    await page.get_by_role("button", name="Aplicar").click()
    await expect(page.locator("#roster-verdict")).to_have_text("Roster applied.")
    await page.get_by_role("link", name="Students", exact=True).click()
    await expect(page.locator("#students")).to_contain_text("Ana")
    await expect(page.locator("#students")).to_contain_text("Beto")
    await _checked(page, checker, "students")
    beto = await page.locator("#students tr", has_text="Beto").locator("td").first.inner_text()
    ana = await page.locator("#students tr", has_text="Ana").locator("td").first.inner_text()

    # A guardian with a card, linked to Beto until a date.
    await page.get_by_role("link", name="Guardians").click()
    form = page.locator("#new-guardian")
    await form.get_by_label("Name").fill("João")
    await form.get_by_label("CPF").fill("111.444.777-35")
    await form.get_by_label("Card number").fill("777")
    await form.get_by_role("button", name="Add guardian").click()
    await _notice(page, "Guardian João added")
    await _checked(page, checker, "guardians")
    joao = await page.locator("#guardians tr", has_text="João").locator("td").first.inner_text()
    await page.get_by_role("link", name="Links").click()
    await page.get_by_label("Student id").fill(beto)
    await page.get_by_label("Guardian id").fill(joao)
    await page.get_by_label("Kind").select_option("temporary")
    await page.get_by_label("Valid until").fill("2030-01-12T18:30")
    await page.get_by_role("button", name="Link", exact=True).click()
    await _notice(page, f"Guardian {joao} linked to student {beto} (temporary).")
    await expect(page.locator("#links")).to_contain_text("2030-01-12 21:30:00 UTC")
    await _checked(page, checker, "links")

    # An authorized person for Ana, approved.
    await page.get_by_role("link", name="Authorized persons").click()
    form = page.locator("#new-person")
    await form.get_by_label("Student id").fill(ana)
    await form.get_by_label("Name").fill("Tia Rosa")
    await form.get_by_role("button", name="Authorize").click()
    await _notice(page, "Authorized person Tia Rosa added")
    row = page.locator("#persons tr", has_text="Tia Rosa")
    await expect(row.locator(".status")).to_have_text("pending")
    await row.get_by_role("button", name="Aprovar").click()
    await _notice(page, "Tia Rosa: approved.")
    await expect(row.locator(".status")).to_have_text("approved")
    await _checked(page, checker, "persons")

    async with context.sessions() as session:
        link = (await session.exec(select(GuardianLink).where(
            GuardianLink.guardian_id == int(joao)))).one()
        card = (await session.exec(select(Credential).where(
            Credential.holder_id == int(joao), Credential.holder_kind == "guardian"))).one()
        actors = set((await session.exec(select(AuditEntry.actor).where(
            AuditEntry.school_id == school_id))).all())
    assert link.kind == "temporary" and card.card_value == 777
    assert actors == {"operator:operator"}
