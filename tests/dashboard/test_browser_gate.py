"""Browser tests skip without Chromium on a laptop, and fail without it in CI."""

from __future__ import annotations

import pytest

from tests.dashboard import browser


def test_missing_chromium_skips_locally_and_fails_in_ci(monkeypatch):
    monkeypatch.setattr(browser.shutil, "which", lambda _name: None)
    monkeypatch.setattr(browser, "REQUIRE_BROWSER", False)
    with pytest.raises(pytest.skip.Exception, match="install-system-deps"):
        browser.chromium_path()
    monkeypatch.setattr(browser, "REQUIRE_BROWSER", True)
    with pytest.raises(pytest.fail.Exception, match="chromium is not installed"):
        browser.chromium_path()
    monkeypatch.setattr(browser.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert browser.chromium_path() == "/usr/bin/chromium"
