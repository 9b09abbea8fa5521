"""The guardian page in headless Chromium: sign-in by a one-time link received on the
notification webhook, "Estou chegando", a second guardian following the same student live,
refused links, a link to the student that ended; axe-core clean at phone and desktop widths."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta

import pytest
import pytest_asyncio
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Browser, Page, async_playwright, expect
from pydantic import SecretStr
from sqlmodel import update

from activities.pickup.models import GuardianLink, SignInLink
from services.app import create_app
from shared.db.models import utcnow
from tests.api.conftest import API_KEY, make_context
from tests.dashboard.browser import ARTIFACTS, chromium_path, saved_screenshots, served
from tests.support.guardian_inbox import SECRET, Inbox
from tests.support.pickup import serve

pytestmark = pytest.mark.parametrize("backend", ["sqlite"])
KEY = {"X-API-Key": API_KEY}
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
ARRIVED = "Aviso de chegada recebido"


@dataclass
class Guardians:
    """The served app, its context, the webhook's inbox and a Chromium to open pages in."""

    base: str
    context: object
    inbox: Inbox
    browser: Browser

    async def page(self, viewport: dict) -> Page:
        context = await self.browser.new_context(base_url=self.base, viewport=viewport)
        page = await context.new_page()
        page.set_default_timeout(15_000)
        return page

    async def api(self, method: str, path: str, body: dict | None = None) -> dict:
        page = await self.page(DESKTOP)
        answer = await page.request.fetch(f"/api/pickup/{path}", method=method, headers=KEY,
                                          data=body)
        assert answer.ok, await answer.text()
        result = await answer.json()
        await page.context.close()
        return result


@pytest_asyncio.fixture
async def guardians(settings, temporal_env) -> AsyncIterator[Guardians]:
    executable = chromium_path()
    settings.pipeline.task_queue_suffix = f"-dash-{uuid.uuid4().hex[:8]}"
    settings.pickup.timers_enabled = False  # no pickup worker: a READY timer would linger
    settings.pickup.sse_poll_seconds = 0.1
    settings.pickup.notification_webhook_secret = SecretStr(SECRET)
    context = await make_context(settings, temporal_env)
    inbox = Inbox()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        async with serve(inbox.app()) as hooks, served(create_app(context)) as base, \
                async_playwright() as playwright:
            settings.pickup.notification_webhook_url = f"{hooks}/hooks"
            settings.pickup.guardian_page_url = base
            browser = await playwright.chromium.launch(executable_path=executable,
                                                       args=["--no-sandbox"])
            try:
                yield Guardians(base, context, inbox, browser)
            finally:
                await browser.close()
    finally:
        await context.engine.dispose()


async def _no_axe_violations(page: Page) -> None:
    result = await Axe().run(page, options={"runOnly": ["wcag2a", "wcag2aa"]})
    found = [f"{v['id']}: {v['help']} ({len(v['nodes'])})"
             for v in result.response["violations"]]
    assert not found, found


async def _axe_at_both_widths(page: Page) -> None:
    for viewport in (PHONE, DESKTOP):
        await page.set_viewport_size(viewport)
        await _no_axe_violations(page)


async def _shot(page: Page, name: str) -> None:
    await page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
    saved_screenshots.append(ARTIFACTS / f"{name}.png")


async def _ask_for_link(g: Guardians, page: Page, identity: str, guardian_id: int) -> str:
    seen = len(g.inbox.links(guardian_id))
    await page.goto("/guardian")
    await expect(page).to_have_url("/guardian/sign-in")
    await page.get_by_label("CPF, e-mail ou telefone cadastrado na escola").fill(identity)
    await page.get_by_role("button", name="Receber link de acesso").click()
    await expect(page.locator("#sent")).to_contain_text("enviamos um link de acesso")
    return await g.inbox.next_link(guardian_id, seen)


async def _sign_in(g: Guardians, page: Page, identity: str, guardian_id: int) -> str:
    link = await _ask_for_link(g, page, identity, guardian_id)
    await page.goto(link)
    await page.get_by_role("button", name="Entrar").click()
    await expect(page).to_have_url("/guardian")
    return link


async def test_guardians_sign_in_by_link_and_follow_the_same_student_live(guardians):
    g = guardians
    school = await g.api("POST", "schools", {"name": "Escola Sol"})
    ana = (await g.api("POST", "students", {"school_id": school["id"], "name": "Ana"}))["id"]
    maria = (await g.api("POST", "guardians", {"name": "Maria", "cpf": "52998224725"}))["id"]
    joao = (await g.api("POST", "guardians", {"name": "João",
                                              "contact": "joao@example.org"}))["id"]
    await g.api("POST", "links", {"student_id": ana, "guardian_id": maria,
                                  "kind": "permanent"})
    await g.api("POST", "links", {"student_id": ana, "guardian_id": joao, "kind": "temporary",
                                  "valid_until": (utcnow() + timedelta(hours=2)).isoformat()})

    # Maria, on a phone: the sign-in page, then the link's page, both accessible.
    phone = await g.page(PHONE)
    link = await _ask_for_link(g, phone, "529.982.247-25", maria)
    await _axe_at_both_widths(phone)
    await phone.goto(link)
    await _axe_at_both_widths(phone)
    await phone.set_viewport_size(PHONE)
    await phone.get_by_role("button", name="Entrar").click()
    await expect(phone).to_have_url("/guardian")
    await expect(phone.get_by_role("heading", name="Olá, Maria")).to_be_visible()
    card = phone.locator(f'li[data-student-id="{ana}"]')
    await expect(card.locator(".chip")).to_have_text("Na escola")
    await expect(phone.locator("#live-state")).to_have_text("Atualizando ao vivo.")

    # João, on a desktop, follows the same student.
    desk = await g.page(DESKTOP)
    await _sign_in(g, desk, "joao@example.org", joao)
    other = desk.locator(f'li[data-student-id="{ana}"]')
    await expect(other.locator(".chip")).to_have_text("Na escola")
    await expect(desk.locator("#live-state")).to_have_text("Atualizando ao vivo.")

    # Maria sends "Estou chegando"; João sees the card change without reloading.
    await card.get_by_role("button", name="Estou chegando").click()
    await expect(phone.locator("#notices")).to_contain_text("Aviso enviado")
    await expect(card.locator(".chip")).to_have_text(ARRIVED)
    await expect(other.locator(".chip")).to_have_text(ARRIVED)
    await expect(desk.locator("#notification-list")).to_contain_text(
        "Recebemos o aviso de chegada para Ana")
    await expect(desk.locator("#live-state")).to_have_text(f"Ana: {ARRIVED}")
    # Staff open the exit: both pages follow.
    await g.api("POST", f"students/{ana}/ready", {"version": 1})
    for page in (phone, desk):
        await expect(page.locator(f'li[data-student-id="{ana}"] .chip')).to_have_text(
            "Na saída: retirada liberada")
    await expect(other.get_by_role("button", name="Estou chegando")).to_have_count(0)
    await _axe_at_both_widths(desk)
    await _axe_at_both_widths(phone)
    await _shot(phone, "guardian-page-phone")
    await _shot(desk, "guardian-page-desktop")

    # Maria's link, used, is refused in another browser.
    stranger = await g.page(PHONE)
    await stranger.goto(link)
    await expect(stranger.get_by_role("heading", name="Link inválido")).to_be_visible()
    await expect(stranger.get_by_role("button", name="Entrar")).to_have_count(0)
    await _axe_at_both_widths(stranger)

    # A fresh link for João, left until it expired, is refused too.
    late = await g.page(PHONE)
    expired = await _ask_for_link(g, late, "joao@example.org", joao)
    async with g.context.sessions() as session, session.begin():
        await session.exec(update(SignInLink).where(SignInLink.used_at.is_(None)).values(
            expires_at=utcnow() - timedelta(seconds=1)))
    await late.goto(expired)
    await expect(late.get_by_role("heading", name="Link inválido")).to_be_visible()

    # João's link to Ana ends: on his next load Ana is gone, while Maria still sees her.
    async with g.context.sessions() as session, session.begin():
        await session.exec(update(GuardianLink).where(GuardianLink.guardian_id == joao)
                           .values(valid_until=utcnow() - timedelta(seconds=1)))
    await desk.reload()
    await expect(desk.locator(f'li[data-student-id="{ana}"]')).to_have_count(0)
    await expect(desk.locator("#students")).to_contain_text("Nenhum aluno vinculado")
    await expect(desk.locator("#notification-list")).not_to_contain_text("Ana")
    await phone.reload()
    await expect(card.locator(".chip")).to_have_text("Na saída: retirada liberada")
    await _axe_at_both_widths(desk)
