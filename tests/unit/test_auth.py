"""API key resolution and generation."""

from __future__ import annotations

import os
import stat

import pytest

from shared.auth import MissingApiKeyError, ensure_generated_api_key, keys_match, resolve_api_key
from shared.settings import Settings


def test_generated_key_is_private_and_kept_across_boots(tmp_path):
    path = tmp_path / "api-key"
    assert ensure_generated_api_key(path) is True
    first = path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first.strip()) >= 32
    assert ensure_generated_api_key(path) is False
    assert path.read_text() == first


def test_generated_key_is_private_from_its_creation(tmp_path, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("the key must not rely on a chmod after its creation")

    path = tmp_path / "api-key"
    path.touch(mode=0o644)  # an empty leftover, readable by all
    monkeypatch.setattr(os, "chmod", refuse)
    previous = os.umask(0)
    try:
        assert ensure_generated_api_key(path) is True
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_text().strip()


def test_configured_key_wins_over_the_generated_file(tmp_path):
    settings = Settings(data_dir=tmp_path, api_key="configured-key")
    ensure_generated_api_key(settings.api_key_file)
    assert resolve_api_key(settings) == "configured-key"


def test_generated_file_is_used_when_nothing_is_configured(tmp_path):
    settings = Settings(data_dir=tmp_path)
    ensure_generated_api_key(settings.api_key_file)
    assert resolve_api_key(settings) == settings.api_key_file.read_text().strip()


def test_no_key_anywhere_refuses_with_the_setting_name(tmp_path):
    with pytest.raises(MissingApiKeyError, match="ESTEIRA_API_KEY"):
        resolve_api_key(Settings(data_dir=tmp_path))


def test_keys_match():
    assert keys_match("abc", "abc")
    assert not keys_match("abd", "abc")
    assert not keys_match(None, "abc")
