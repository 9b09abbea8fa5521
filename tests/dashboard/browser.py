"""What the browser tests share: Debian's Chromium, the app on a real port, artifacts."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI

from tests.support.ports import free_ports

REPO = Path(__file__).resolve().parents[2]
# CI sets this: there a missing browser is a broken install, not a reason to skip.
REQUIRE_BROWSER = os.environ.get("ESTEIRA_TEST_REQUIRE_POSTGRES") == "1"
ARTIFACTS = Path(os.environ.get("ESTEIRA_TEST_ARTIFACTS", REPO / "tmp" / "dashboard"))
# Set once a browser test has saved screenshots, so the summary names the folder.
saved_screenshots: list[Path] = []


def chromium_path() -> str:
    """Debian's chromium; skip (or fail in CI) when it is not installed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = ("Debian's chromium is not installed (scripts/install-system-deps.sh "
                   "installs it)")
        if REQUIRE_BROWSER:
            pytest.fail(message)
        pytest.skip(message)
    return found


@asynccontextmanager
async def served(app: FastAPI) -> AsyncIterator[str]:
    """The app on a loopback port (uvicorn in this event loop); yields its base URL."""
    (port,) = free_ports(1)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
