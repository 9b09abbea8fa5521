"""The pickup board in headless Chromium: staff's actions, a stale card, a card that timed out."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Page, async_playwright, expect

from activities.pickup.board import revert_ready
from services.app import create_app
from shared.db.models import utcnow
from tests.api.conftest import API_KEY, make_context
from tests.dashboard.browser import ARTIFACTS, chromium_path, saved_screenshots, served

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
KEY = {"X-API-Key": API_KEY}
MOVED = "Outra pessoa já moveu este cartão."


@pytest_asyncio.fixture
async def board_page(settings, temporal_env) -> AsyncIterator[tuple[Page, object]]:
    """A signed-in Chromium page on the app, and the app's context (no worker needed)."""
    executable = chromium_path()
    settings.pipeline.task_queue_suffix = f"-dash-{uuid.uuid4().hex[:8]}"
    settings.pickup.timers_enabled = False  # no pickup worker: a READY timer would linger
    settings.pickup.sse_poll_seconds = 0.1
    context = await make_context(settings, temporal_env)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        async with served(create_app(context)) as base, async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=executable,
                                                       args=["--no-sandbox"])
            page = await browser.new_page(base_url=base, viewport={"width": 1280, "height": 900})
            page.set_default_timeout(15_000)
            try:
                await page.goto("/pickup")
                await page.get_by_label("Operator").fill("operator")
                await page.get_by_label("Password").fill(API_KEY)
                await page.get_by_role("button", name="Sign in").click()
                await expect(page).to_have_url("/pickup")
                yield page, context
            finally:
                await browser.close()
    finally:
        await context.engine.dispose()


async def _api(page: Page, path: str, body: dict | None = None) -> dict:
    answer = await page.request.post(f"/api/pickup/{path}", headers=KEY, data=body)
    assert answer.ok, await answer.text()
    return await answer.json()


async def _shot(page: Page, name: str) -> None:
    await page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
    saved_screenshots.append(ARTIFACTS / f"{name}.png")


async def _no_axe_violations(page: Page) -> None:
    result = await Axe().run(page, options={"runOnly": ["wcag2a", "wcag2aa"]})
    found = [f"{v['id']}: {v['help']} ({len(v['nodes'])})"
             for v in result.response["violations"]]
    assert not found, found


async def test_staff_act_on_cards_and_a_stale_card_is_refreshed(board_page):
    page, _ = board_page
    school = await _api(page, "schools", {"name": "Escola Sol"})
    bia = (await _api(page, "students", {"schoolId": school["id"], "name": "Bia"}))["id"]
    await _api(page, f"students/{bia}/arrival")
    await page.goto(f"/pickup/{school['id']}")
    await expect(page.locator("#live-state")).to_have_text("Live.")
    card = page.locator(f'tbody tr[data-student-id="{bia}"]')
    chip = card.locator(".state")
    notices = page.locator("#notices")
    await expect(chip).to_have_text("AWAITING")
    await expect(card.get_by_role("button")).to_have_count(1)

    # Pronto: the card shows READY, and focus lands on its next action.
    await card.get_by_role("button", name="Pronto").click()
    await expect(chip).to_have_text("READY")
    await expect(card).to_have_attribute("data-version", "2")
    await expect(notices).to_have_text("Bia: pronto para sair.")
    assert await page.evaluate("document.activeElement.textContent") == "Retirado"

    # Someone else moves the card while this page can't refresh it (its card fetches fail).
    await page.route("**/students/*/card", lambda route: route.abort())
    await _api(page, f"students/{bia}/undo", {"version": 2})
    await _api(page, f"students/{bia}/ready", {"version": 3})
    await expect(card).to_have_attribute("data-version", "2")
    await card.get_by_role("button", name="Desfazer").click()
    await expect(notices).to_contain_text(MOVED)
    await expect(notices.locator("code")).to_have_text("pickup.version-conflict")
    await expect(card).to_have_attribute("data-version", "4")
    await expect(chip).to_have_text("READY")
    await page.unroute("**/students/*/card")

    # Retirado, then Desfazer: back to READY with a new version.
    await card.get_by_role("button", name="Retirado").click()
    await expect(chip).to_have_text("PICKED_UP")
    await expect(card.locator(".reason")).to_have_text("retirado")
    await expect(card).to_have_class("picked-up")
    await card.get_by_role("button", name="Desfazer").click()
    await expect(chip).to_have_text("READY")
    await expect(card).to_have_attribute("data-version", "6")
    await _no_axe_violations(page)
    await _shot(page, "pickup-board-actions")


async def test_a_card_that_left_by_timeout_is_shown_unlike_a_picked_up_one(board_page):
    page, context = board_page
    school = await _api(page, "schools", {"name": "Escola Lua"})
    ids = {}
    for name in ("Bia", "Caio"):
        ids[name] = (await _api(page, "students", {"schoolId": school["id"], "name": name}))["id"]
        await _api(page, f"students/{ids[name]}/arrival")
        await _api(page, f"students/{ids[name]}/ready", {"version": 1})
    await page.goto(f"/pickup/{school['id']}")
    await expect(page.locator("#live-state")).to_have_text("Live.")
    bia = page.locator(f'tbody tr[data-student-id="{ids["Bia"]}"]')
    caio = page.locator(f'tbody tr[data-student-id="{ids["Caio"]}"]')

    await caio.get_by_role("button", name="Retirado").click()
    await expect(caio.locator(".state")).to_have_text("PICKED_UP")
    # Bia's READY times out (the timer's revert, applied here directly): the broadcast
    # carries origin "timeout" and the seed's reason, and the board alerts differently.
    async with context.sessions() as session, session.begin():
        assert await revert_ready(session, student_id=ids["Bia"], version=2, at=utcnow(),
                                  actor="timer:ready") is not None
    await expect(bia.locator(".state")).to_have_text("AT_SCHOOL")
    await expect(bia).to_have_class("left-by-timeout")
    await expect(bia.locator(".badge.timeout")).to_have_text(
        "Saiu do quadro: tempo de prontidão esgotado")
    await expect(page.locator("#notices .notice.warning")).to_have_text(
        "Bia saiu do quadro: tempo de prontidão esgotado.")
    await expect(bia.get_by_role("button")).to_have_count(0)
    await expect(caio.locator(".badge.timeout")).to_have_count(0)
    await expect(caio.locator(".badge.picked")).to_have_text("retirado")
    await _no_axe_violations(page)
    await _shot(page, "pickup-board-timeout")
