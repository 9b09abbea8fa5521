"""Bad input answers one way on every REST door: 422 `request.invalid` as a problem document,
never FastAPI's `{"detail": …}`, and an unknown enum filter is refused, not an empty list."""

from __future__ import annotations

from http import HTTPStatus

import pytest

from tests.api.conftest import API_KEY

KEY = {"X-API-Key": API_KEY}
PROBLEM = "application/problem+json"


def assert_invalid(response, where: list | None = None) -> dict:
    """A 422 request.invalid problem (with the rejected parameter's location, if named)."""
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert (body["code"], body["status"], body["title"]) == (
        "request.invalid", 422, HTTPStatus(422).phrase)
    assert "detail" not in body or isinstance(body["detail"], str)
    if where is not None:
        assert [e["loc"] for e in body["errors"]] == [where]
    return body


@pytest.mark.parametrize("content_type", ["multipart/form-data; boundary=xx",
                                          "multipart/form-data"])
async def test_an_unreadable_upload_body_is_request_invalid(api, content_type):
    response = await api.post("/api/files", content=b"garbage",
                              headers={**KEY, "content-type": content_type})
    body = assert_invalid(response)
    assert body["message"].startswith("The request body could not be read")


async def test_malformed_json_is_request_invalid(api):
    response = await api.post("/api/pipeline/pause", content=b"{not json",
                              headers={**KEY, "content-type": "application/json"})
    assert_invalid(response)
    assert (await api.get("/api/pipeline/state", headers=KEY)).json()["paused"] is False


@pytest.mark.parametrize(("path", "name"), [
    ("/api/jobs?status=Bogus", "status"),
    ("/api/jobs?status=Queued&status=queued", "status"),
    ("/api/sisbajud/orders?state=Bogus", "state"),
    ("/api/sisbajud/notices?state=Bogus", "state"),
    ("/api/sisbajud/outbox?state=Bogus", "state"),
    ("/api/sisbajud/alarms?code=bogus.alarm", "code"),
    ("/api/pickup/students?state=Bogus", "state"),
    ("/api/pickup/authorized-persons?status=Bogus", "status"),
    ("/api/pickup/ledger?status=Bogus", "status"),
    ("/api/pickup/notifications?status=Bogus", "status"),
])
async def test_an_unknown_enum_filter_is_refused(api, path, name):
    response = await api.get(path, headers=KEY)
    body = assert_invalid(response)
    assert [e["loc"][:2] for e in body["errors"]] == [["query", name]]


@pytest.mark.parametrize("path", ["/api/jobs?status=Queued", "/api/sisbajud/orders?state=parked",
                                  "/api/sisbajud/notices?state=PARKED",
                                  "/api/sisbajud/outbox?state=pending",
                                  "/api/sisbajud/alarms?code=ledger.orphan-operation"])
async def test_a_known_enum_filter_is_still_answered(api, path):
    response = await api.get(path, headers=KEY)
    assert response.status_code == 200, response.text
    assert response.json()["items"] == []


async def test_framework_refusals_are_problems_too(api):
    missing = await api.get("/api/no-such-thing", headers=KEY)
    assert (missing.status_code, missing.headers["content-type"]) == (404, PROBLEM)
    assert missing.json()["code"] == "resource.not-found"
    wrong_method = await api.delete("/api/pipeline/state", headers=KEY)
    assert (wrong_method.status_code, wrong_method.headers["content-type"]) == (405, PROBLEM)
    assert wrong_method.json()["code"] == "request.invalid"
    assert wrong_method.headers["allow"] == "GET"
