"""Sessions end at logout everywhere, guessing passwords is throttled, pages carry hardening."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from services.app import create_app
from services.dashboard.headers import CONTENT_SECURITY_POLICY
from services.dashboard.session import SESSION_COOKIE
from tests.api.conftest import API_KEY
from tests.dashboard.conftest import csrf_of, sign_in

SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


@SQLITE_ONLY
async def test_a_copied_session_cookie_is_dead_after_logout(operator):
    stolen = operator.cookies.get(SESSION_COOKIE)
    page = await operator.get("/jobs")
    assert page.status_code == 200
    out = await operator.post("/logout", data={"csrf_token": csrf_of(page.text)})
    assert out.status_code == 303
    # The same cookie value replayed (as a thief or a second tab would) is refused.
    operator.cookies.set(SESSION_COOKIE, stolen)
    again = await operator.get("/jobs")
    assert again.status_code == 303 and again.headers["location"].startswith("/login")


@SQLITE_ONLY
async def test_revocation_holds_on_every_api_process_of_the_store(operator):
    """A second app on the same store (another replica) refuses the revoked cookie too."""
    stolen = operator.cookies.get(SESSION_COOKIE)
    page = await operator.get("/jobs")
    await operator.post("/logout", data={"csrf_token": csrf_of(page.text)})
    other = create_app(operator.context)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=other),
                                 base_url="http://esteira") as replica:
        replica.cookies.set(SESSION_COOKIE, stolen)
        assert (await replica.get("/jobs")).status_code == 303


@SQLITE_ONLY
async def test_wrong_passwords_lock_the_name_even_for_the_right_one(web):
    limit = web.context.settings.dashboard.sign_in_max_failures
    for _ in range(limit):
        assert (await sign_in(web, password="wrong-password")).status_code == 401
    locked = await sign_in(web)  # the right password, during the lockout
    assert locked.status_code == 429
    assert SESSION_COOKIE not in locked.cookies
    assert 0 < int(locked.headers["Retry-After"]) <= \
        web.context.settings.dashboard.sign_in_lockout_seconds
    # Other names are not locked by this one's failures (the dev operator is the only name).
    assert (await sign_in(web, username="someone-else", password="x")).status_code == 401


@SQLITE_ONLY
async def test_a_right_password_before_the_limit_clears_the_count(web):
    limit = web.context.settings.dashboard.sign_in_max_failures
    for _ in range(limit - 1):
        await sign_in(web, password="wrong-password")
    assert (await sign_in(web)).status_code == 303
    web.cookies.clear()
    for _ in range(limit - 1):
        await sign_in(web, password="wrong-password")
    assert (await sign_in(web)).status_code == 303, "the earlier failures were forgiven"


@SQLITE_ONLY
async def test_the_lockout_ends(web):
    web.context.settings.dashboard.sign_in_max_failures = 2
    web.context.settings.dashboard.sign_in_lockout_seconds = 1
    app = create_app(web.context)  # settings are read when the app is built
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://esteira") as client:
        for _ in range(2):
            await sign_in(client, password="wrong-password")
        assert (await sign_in(client)).status_code == 429
        await asyncio.sleep(1.1)
        assert (await sign_in(client)).status_code == 303


@SQLITE_ONLY
@pytest.mark.parametrize("path", ["/login", "/jobs", "/static/dashboard.css"])
async def test_pages_forbid_framing_and_sniffing_and_carry_the_csp(operator, path):
    answer = await operator.get(path)
    assert answer.status_code == 200
    assert answer.headers["X-Frame-Options"] == "DENY"
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert answer.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY


@SQLITE_ONLY
async def test_api_answers_are_not_sniffed_either(web):
    answer = await web.get("/api/jobs", headers={"X-API-Key": API_KEY})
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
