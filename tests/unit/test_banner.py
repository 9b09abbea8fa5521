"""The "Service ready" banner."""

from __future__ import annotations

from services.banner import WIDTH, ready_rows, render
from shared.settings import Settings


def _banner(monkeypatch, **env):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    settings = Settings()
    return render("Service ready", ready_rows(settings, pipeline="running", api_key_note="x"))


def test_banner_has_the_seeds_rows_and_frame(monkeypatch):
    text = _banner(monkeypatch)
    lines = text.splitlines()
    assert lines[0].startswith("=") and " Service ready " in lines[0]
    assert len(lines[0]) == WIDTH and lines[-1] == "=" * WIDTH
    keys = [line.split(" = ")[0].strip() for line in lines[1:-1]]
    for expected in ("host mode", "environment", "content root", "storage root",
                     "operational store",
                     "poll interval", "pipeline", "version", "temporal", "temporal ui"):
        assert expected in keys
    assert len({line.index(" = ") for line in lines[1:-1]}) == 1


def test_mistyped_key_shows_the_default_and_is_named(monkeypatch):
    text = _banner(monkeypatch, ESTEIRA_PIPELINE__POLL_INTERVAL_SECONDS="5",
                   ESTEIRA_PIPELNE__MAX_CONCURRENCY="9")
    assert "poll interval     = 5s" in text
    assert "max concurrency   = 4" in text
    assert "ESTEIRA_PIPELNE__MAX_CONCURRENCY" in text


def test_secrets_never_appear_in_the_banner(monkeypatch):
    text = _banner(monkeypatch, ESTEIRA_API_KEY="banner-secret-key",
                   ESTEIRA_DATABASE_URL="postgresql://u:banner-db-pass@h/db")
    assert "banner-secret-key" not in text and "banner-db-pass" not in text
    assert "PostgreSQL (h:5432/db)" in text
