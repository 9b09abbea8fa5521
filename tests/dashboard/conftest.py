"""The dashboard on the real app: signed-in clients, CSRF tokens, a served copy for browsers."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from services.app import create_app
from shared.settings import Settings
from tests.api.conftest import API_KEY, make_context
from tests.dashboard.browser import ARTIFACTS, saved_screenshots

CSRF_INPUT = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(html: str) -> str:
    """The CSRF token a rendered page carries in its forms."""
    found = CSRF_INPUT.search(html)
    assert found, "the page has no CSRF field"
    return found.group(1)


async def sign_in(client: httpx.AsyncClient, username: str = "operator",
                  password: str = API_KEY) -> httpx.Response:
    """The login form as a browser posts it (its double-submit cookie included)."""
    page = await client.get("/login")
    return await client.post("/login", data={"username": username, "password": password,
                                             "csrf_token": csrf_of(page.text), "next": "/jobs"})


@pytest_asyncio.fixture
async def web(settings: Settings, temporal_env: WorkflowEnvironment
              ) -> AsyncIterator[httpx.AsyncClient]:
    """An anonymous browser-like client on the app (cookies kept, redirects not followed)."""
    settings.pipeline.task_queue_suffix = f"-dash-{uuid.uuid4().hex[:8]}"
    context = await make_context(settings, temporal_env)
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as client:
        client.context = context  # type: ignore[attr-defined]
        yield client
    await context.engine.dispose()


@pytest_asyncio.fixture
async def operator(web: httpx.AsyncClient) -> httpx.AsyncClient:
    """The same client, signed in as the development operator."""
    answer = await sign_in(web)
    assert answer.status_code == 303, answer.text
    return web


def pytest_terminal_summary(terminalreporter) -> None:
    """Say where the browser tests left their screenshots."""
    if saved_screenshots:
        terminalreporter.write_line(f"dashboard screenshots ({len(saved_screenshots)}): "
                                    f"{ARTIFACTS}")
