"""The dashboard's Temporal UI links: the public URL when set, never a wildcard address."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from starlette.requests import Request

from services.api.routes.temporal_codec import allowed_origins
from services.dashboard.web import temporal_link
from shared.settings import Settings
from shared.temporal_ui import temporal_ui_url


def test_the_configured_public_url_wins(tmp_path):
    settings = Settings(data_dir=tmp_path, host="0.0.0.0",
                        dashboard={"temporal_ui_url": "https://temporal.example.org/ui/"})
    assert temporal_ui_url(settings, seen_host="10.0.0.5") == "https://temporal.example.org/ui"
    # The UI at that origin may call the codec server from the operator's browser.
    assert "https://temporal.example.org" in allowed_origins(settings)


def test_a_wildcard_host_links_to_the_host_the_operator_used(tmp_path):
    settings = Settings(data_dir=tmp_path, host="0.0.0.0", ports={"temporal_ui": 9233})
    assert temporal_ui_url(settings, seen_host="esteira.lan") == "http://esteira.lan:9233"
    assert temporal_ui_url(settings) == "http://127.0.0.1:9233"
    assert "0.0.0.0" not in temporal_ui_url(settings)


def test_a_named_host_is_used_as_it_is(tmp_path):
    settings = Settings(data_dir=tmp_path, host="esteira.internal")
    assert temporal_ui_url(settings, seen_host="x") == "http://esteira.internal:8233"


@pytest.mark.parametrize("url", ["file:///x", "javascript:alert(1)"])
def test_only_a_web_url_is_accepted(tmp_path, url):
    with pytest.raises(ValueError, match="http"):
        Settings(data_dir=tmp_path, dashboard={"temporal_ui_url": url})


def _request(context, host: str) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/jobs/1", "query_string": b"",
                    "headers": [(b"host", host.encode())], "scheme": "http",
                    "app": SimpleNamespace(state=SimpleNamespace(context=context))})


def test_workflow_links_use_the_public_ui(tmp_path):
    settings = Settings(data_dir=tmp_path, host="0.0.0.0")
    context = SimpleNamespace(settings=settings)
    assert temporal_link(_request(context, "seen.example:8080"), "signer-job:1") == (
        "http://seen.example:8233/namespaces/default/workflows/signer-job%3A1")
    settings.dashboard.temporal_ui_url = "https://ui.example"
    assert temporal_link(_request(context, "seen.example"), "signer-job:1") == (
        "https://ui.example/namespaces/default/workflows/signer-job%3A1")
