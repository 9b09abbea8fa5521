"""The controller URL a worker will call: http(s) only, never file:// or another scheme."""

from __future__ import annotations

import pytest

from shared.settings import Settings


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://controller/", "gopher://x",
                                 "http://", "javascript:alert(1)"])
async def test_a_turnstile_url_must_be_http_or_https(pickup_api, url):
    answer = await pickup_api.http.post("/api/pickup/schools",
                                        json={"name": "Escola", "turnstileUrl": url})
    assert answer.status_code == 422 and answer.json()["code"] == "request.invalid"


async def test_an_http_turnstile_url_is_kept(pickup_api):
    school = await pickup_api.ok("POST", "/api/pickup/schools",
                                 json={"name": "Escola", "turnstileUrl": "https://c.example"})
    assert school["turnstileUrl"] == "https://c.example"


@pytest.mark.parametrize("field", ["turnstile_url", "notification_webhook_url"])
def test_the_settings_refuse_a_file_url_too(tmp_path, field):
    with pytest.raises(ValueError, match="http:// or https://"):
        Settings(data_dir=tmp_path, pickup={field: "file:///etc/shadow"})
