"""Tokens carried in a URL path never reach the API's error log lines."""

from starlette.requests import Request

from services.api.app import _loggable_path


def _request(path: str) -> Request:
    return Request({"type": "http", "method": "POST", "path": path, "headers": []})


def test_a_token_in_a_self_authenticated_path_is_hidden():
    logged = _loggable_path(_request("/api/signer/lacuna/webhook/s3cret-token-value"))
    assert "s3cret" not in logged and logged.startswith("/api/signer/lacuna/webhook/")
    assert "m0nitor" not in _loggable_path(_request("/api/pickup/turnstile/monitor/m0nitor/x"))


def test_other_paths_are_logged_as_they_are():
    assert _loggable_path(_request("/api/jobs/123/cancel")) == "/api/jobs/123/cancel"
