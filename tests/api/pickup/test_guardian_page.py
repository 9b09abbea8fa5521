"""The guardian page over HTTP: one-time links through the signed notification webhook, the
page's own cookie session, "Estou chegando" as a form post, valid links only, the live stream."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta

import httpx
import pytest
import pytest_asyncio
from pydantic import SecretStr
from sqlmodel import update

from activities.pickup.access import hash_token
from activities.pickup.models import AccessToken, AuditEntry, GuardianLink, SignInLink, Student
from services.dashboard.routes import guardian as guardian_routes
from shared.db.models import utcnow
from tests.api.pickup.conftest import PickupApi
from tests.api.pickup.test_realtime import _read
from tests.support.guardian_inbox import SECRET, Inbox, token_of
from tests.support.pickup import serve

# Sessions, links and forms don't depend on the store; the links table's CAS is one UPDATE.
pytestmark = pytest.mark.parametrize("backend", ["sqlite", "postgres"])
CPF = "529.982.247-25"
OTHER_CPF = "111.444.777-35"
PAGE_URL = "https://escola.example"
FORM_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class Page:
    """The app with a guardian, their student, the webhook's inbox and a browser factory."""

    api: PickupApi
    inbox: Inbox
    school_id: int
    student_id: int
    guardian_id: int

    def browser(self, scheme: str = "http") -> httpx.AsyncClient:
        """A client with its own cookies and no API key, as a guardian's phone."""
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.api.app),
                                 base_url=f"{scheme}://esteira")

    async def ask(self, browser: httpx.AsyncClient, identity: str = CPF) -> httpx.Response:
        form = await browser.get("/guardian/sign-in")
        return await browser.post("/guardian/sign-in", data={
            "identity": identity, "csrf_token": FORM_TOKEN.search(form.text).group(1)})

    async def link(self, seen: int = 0, scheme: str = "http") -> str:
        async with self.browser(scheme) as browser:
            assert (await self.ask(browser)).status_code == 200
        return await self.inbox.next_link(self.guardian_id, seen)

    async def use(self, browser: httpx.AsyncClient, link: str) -> httpx.Response:
        page = await browser.get(link.removeprefix(PAGE_URL))
        token = FORM_TOKEN.search(page.text)
        return await browser.post("/guardian/link", data={
            "token": token_of(link), "csrf_token": token.group(1) if token else ""})

    @asynccontextmanager
    async def signed_in(self) -> AsyncIterator[httpx.AsyncClient]:
        async with self.browser() as browser:
            answer = await self.use(browser, await self.link(len(self.inbox.links())))
            assert (answer.status_code, answer.headers["location"]) == (303, "/guardian")
            yield browser


@pytest_asyncio.fixture
async def page(pickup_api: PickupApi) -> AsyncIterator[Page]:
    api, inbox = pickup_api, Inbox()
    pickup = api.context.settings.pickup
    pickup.timers_enabled = False  # no pickup worker here
    async with serve(inbox.app()) as hooks:
        pickup.notification_webhook_url = f"{hooks}/hooks"
        pickup.notification_webhook_secret = SecretStr(SECRET)
        pickup.guardian_page_url = PAGE_URL
        school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
        student = await api.ok("POST", "/api/pickup/students",
                               json={"school_id": school["id"], "name": "Ana"})
        guardian = await api.ok("POST", "/api/pickup/guardians", json={
            "name": "Maria", "cpf": CPF, "contact": "Maria@Example.org"})
        await api.ok("POST", "/api/pickup/links", json={
            "student_id": student["id"], "guardian_id": guardian["id"], "kind": "permanent"})
        yield Page(api, inbox, school["id"], student["id"], guardian["id"])


def _without_tokens(html: str) -> str:
    return FORM_TOKEN.sub("", html)


async def test_a_link_is_asked_for_without_telling_who_exists_and_leaves_signed(page):
    async with page.browser() as browser:
        known = await page.ask(browser)
        by_contact = await page.ask(browser, "  maria@example.ORG ")
        unknown = await page.ask(browser, OTHER_CPF)
        nobody = await page.ask(browser, "nobody@example.org")
    assert {r.status_code for r in (known, by_contact, unknown, nobody)} == {200}
    assert len({_without_tokens(r.text) for r in (known, by_contact, unknown, nobody)}) == 1
    await page.inbox.next_link(page.guardian_id, 1)
    assert page.inbox.refused == 0 and len(page.inbox.bodies) == 2
    body = page.inbox.bodies[0]
    assert body["kind"] == "sign-in-link" and body["guardian_id"] == page.guardian_id
    assert body["student_id"] is None and body["link"] in body["message"]
    assert body["link"].startswith(f"{PAGE_URL}/guardian/link?token=")
    # Only the hash is kept; the raw token is nowhere in the store's row.
    raw = token_of(body["link"])
    [first, _] = await page.api.seed.all(SignInLink)
    assert first.token_hash == hash_token(raw) and raw not in repr(first.model_dump())
    assert first.used_at is None


async def test_a_link_signs_in_once_and_a_second_use_is_refused(page):
    link = await page.link()
    async with page.browser() as phone, page.browser() as thief:
        opened = await phone.get(link.removeprefix(PAGE_URL))
        assert opened.status_code == 200 and "Entrar" in opened.text
        # Someone else opens it too (a preview, a forwarded message): that spends nothing.
        seen = await thief.get(link.removeprefix(PAGE_URL))
        assert seen.status_code == 200
        used = await page.use(phone, link)
        assert (used.status_code, used.headers["location"]) == (303, "/guardian")
        cookie = used.headers["set-cookie"]
        assert cookie.startswith("esteira_guardian=") and "HttpOnly" in cookie
        assert "Path=/guardian" in cookie and "SameSite=lax" in cookie
        assert "Secure" not in cookie  # Development on plain http
        home = await phone.get("/guardian")
        assert home.status_code == 200 and "Ana" in home.text and "Estou chegando" in home.text
        second = await thief.post("/guardian/link", data={
            "token": token_of(link), "csrf_token": FORM_TOKEN.search(seen.text).group(1)})
        assert second.status_code == 401 and "Link inválido" in second.text
        assert "esteira_guardian" not in thief.cookies
        assert (await thief.get(link.removeprefix(PAGE_URL))).status_code == 401
        assert (await thief.get("/guardian")).headers["location"] == "/guardian/sign-in"
    [spent] = await page.api.seed.all(SignInLink)
    assert spent.used_at is not None
    assert await page.api.seed.count(AccessToken, AccessToken.kind == "web") == 1


async def test_two_uses_at_once_sign_in_one_session(page):
    link = await page.link()
    phones = [page.browser() for _ in range(4)]
    forms = [await phone.get(link.removeprefix(PAGE_URL)) for phone in phones]
    answers = await asyncio.gather(*(phone.post("/guardian/link", data={
        "token": token_of(link), "csrf_token": FORM_TOKEN.search(form.text).group(1)})
        for phone, form in zip(phones, forms, strict=True)))
    for phone in phones:
        await phone.aclose()
    assert sorted(a.status_code for a in answers) == [303, 401, 401, 401]
    assert await page.api.seed.count(AccessToken, AccessToken.kind == "web") == 1


async def test_an_expired_link_is_refused(page):
    link = await page.link()
    async with page.browser() as phone:
        opened = await phone.get(link.removeprefix(PAGE_URL))  # then left on the table
        async with page.api.context.sessions() as session, session.begin():
            await session.exec(update(SignInLink).values(
                expires_at=utcnow() - timedelta(seconds=1)))
        refused = await phone.post("/guardian/link", data={
            "token": token_of(link), "csrf_token": FORM_TOKEN.search(opened.text).group(1)})
        assert (await phone.get(link.removeprefix(PAGE_URL))).status_code == 401
    assert refused.status_code == 401 and "Link inválido" in refused.text
    assert await page.api.seed.count(AccessToken, AccessToken.kind == "web") == 0


async def test_link_requests_are_limited_per_identity_and_per_address_alike(page):
    pickup = page.api.context.settings.pickup
    pickup.sign_in_link_max_requests, pickup.sign_in_link_max_per_address = 2, 5
    async with page.browser() as browser:
        known = [await page.ask(browser) for _ in range(3)]
        unknown = [await page.ask(browser, OTHER_CPF) for _ in range(3)]
        assert [r.status_code for r in known] == [r.status_code for r in unknown] \
            == [200, 200, 429]
        assert int(known[2].headers["retry-after"]) > 0
        # Five counted from this address (two refused ones are not): the next is refused too.
        assert (await page.ask(browser, "someone@example.org")).status_code == 200
        assert (await page.ask(browser, "else@example.org")).status_code == 429
    assert len(page.inbox.links(page.guardian_id)) <= 2


async def test_the_page_session_is_its_own(page):
    async with page.signed_in() as phone:
        raw = phone.cookies["esteira_guardian"]
        # Not an operator: the dashboard's pages send it to the operator's sign-in.
        operator_page = await phone.get("/pickup")
        assert operator_page.headers["location"].startswith("/login")
        # Not a bearer token of the guardian app, nor the reverse.
        app_call = await phone.get("/api/pickup/guardian/students",
                                   headers={"Authorization": f"Bearer {raw}"})
        assert (app_call.status_code, app_call.json()["code"]) == (401, "pickup.token-invalid")
    app_token = (await page.api.ok("POST", f"/api/pickup/guardians/{page.guardian_id}/tokens",
                                   json={}))["token"]
    async with page.browser() as other:
        other.cookies.set("esteira_guardian", app_token, path="/guardian")
        assert (await other.get("/guardian")).headers["location"] == "/guardian/sign-in"
    # Outside Development the cookie is Secure (a browser sends it back over https only).
    page.api.context.settings.environment = "Production"
    async with page.browser("https") as phone:
        used = await page.use(phone, await page.link(len(page.inbox.links()), "https"))
    assert "Secure" in used.headers["set-cookie"]


async def test_estou_chegando_is_a_form_post_with_the_session_csrf(page):
    async with page.signed_in() as phone:
        home = await phone.get("/guardian")
        csrf = FORM_TOKEN.search(home.text).group(1)
        forged = await phone.post("/guardian/arrivals", data={"student_id": page.student_id})
        assert forged.status_code == 403
        assert (await page.api.seed.get(Student, page.student_id)).state == "AT_SCHOOL"
        sent = await phone.post("/guardian/arrivals",
                                data={"student_id": page.student_id, "csrf_token": csrf})
        assert (sent.status_code, sent.headers["location"]) == (303, "/guardian")
        after = await phone.get("/guardian")
        assert "Aviso de chegada recebido" in after.text
        assert "Recebemos o aviso de chegada para Ana" in after.text  # the notification
        assert "Aviso enviado" in after.text
    student = await page.api.seed.get(Student, page.student_id)
    assert (student.state, student.version) == ("AWAITING", 1)
    [row] = await page.api.seed.all(AuditEntry, AuditEntry.action == "arrival-signalled")
    assert row.actor == f"guardian:{page.guardian_id}"


async def test_signing_out_or_an_operator_revocation_ends_a_session(page):
    async with page.signed_in() as phone, page.signed_in() as tablet:
        copy = phone.cookies["esteira_guardian"]
        csrf = FORM_TOKEN.search((await phone.get("/guardian")).text).group(1)
        out = await phone.post("/guardian/sign-out", data={"csrf_token": csrf})
        assert out.headers["location"] == "/guardian/sign-in"
        async with page.browser() as replay:
            replay.cookies.set("esteira_guardian", copy, path="/guardian")
            assert (await replay.get("/guardian")).headers["location"] == "/guardian/sign-in"
        tokens = await page.api.ok("GET", f"/api/pickup/guardians/{page.guardian_id}/tokens")
        [session] = [t for t in tokens["items"] if t["kind"] == "web"]
        assert (await page.api.http.post(f"/api/pickup/guardians/{page.guardian_id}/tokens/"
                                         f"{session['id']}/revoke")).status_code == 204
        assert (await tablet.get("/guardian")).headers["location"] == "/guardian/sign-in"
    actions = [a.action for a in await page.api.seed.all(AuditEntry)]
    assert actions.count("signed-in") == 2 and "signed-out" in actions and "revoked" in actions


async def test_a_student_whose_link_expired_is_gone_from_the_page(page):
    api = page.api
    other = await api.ok("POST", "/api/pickup/students",
                         json={"school_id": page.school_id, "name": "Bruno"})
    until = (utcnow() + timedelta(hours=1)).isoformat()
    await api.ok("POST", "/api/pickup/links", json={
        "student_id": other["id"], "guardian_id": page.guardian_id, "kind": "temporary",
        "valid_until": until})
    await api.ok("POST", f"/api/pickup/students/{other['id']}/arrival")  # a notification
    async with page.signed_in() as phone:
        assert "Bruno" in (await phone.get("/guardian")).text
        # The link's end passes; no sweep has run.
        async with api.context.sessions() as session, session.begin():
            await session.exec(update(GuardianLink).where(
                GuardianLink.student_id == other["id"]).values(
                valid_until=utcnow() - timedelta(seconds=1)))
        home = await phone.get("/guardian")
        assert "Ana" in home.text and "Bruno" not in home.text
        assert (await phone.get(f"/guardian/students/{other['id']}/card")).status_code == 404
        csrf = FORM_TOKEN.search(home.text).group(1)
        refused = await phone.post("/guardian/arrivals",
                                   data={"student_id": other["id"], "csrf_token": csrf})
        assert "Você não pode mais retirar este aluno" in (await phone.get("/guardian")).text
        assert refused.status_code == 303


async def test_the_live_stream_rides_on_the_cookie_and_ends_with_the_session(page, monkeypatch):
    api = page.api
    api.context.settings.pickup.sse_keepalive_seconds = 0.1
    monkeypatch.setattr(guardian_routes, "SESSION_CHECK_SECONDS", 0.0)
    async with serve(api.app) as base:
        async with page.signed_in() as phone:
            cookie = phone.cookies["esteira_guardian"]
        async with httpx.AsyncClient(base_url=base) as anonymous:
            assert (await anonymous.get("/guardian/events")).status_code == 401
        async with httpx.AsyncClient(base_url=base, cookies={"esteira_guardian": cookie}) as http:
            async def arrive() -> None:
                await api.ok("POST", f"/api/pickup/students/{page.student_id}/arrival")

            [event] = await _read(http, "/guardian/events", 1, when_open=arrive)
            assert event["event"] == "StudentStateChanged" and '"to": "AWAITING"' in event["data"]
            async with asyncio.timeout(10), http.stream("GET", "/guardian/events") as stream:
                async with api.context.sessions() as session, session.begin():
                    await session.exec(update(AccessToken).where(
                        AccessToken.kind == "web").values(expires_at=utcnow()))
                # The stream ends by itself once the session is over.
                async for _ in stream.aiter_lines():
                    pass
            assert (await http.get("/guardian/events")).status_code == 401
