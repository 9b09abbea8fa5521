"""A turnstile controller's Monitor push that is not JSON is refused (422 request.invalid)."""

from __future__ import annotations

from tests.support.pickup import MONITOR_TOKEN


async def test_a_monitor_push_that_is_not_json_is_request_invalid(pickup_api):
    school = await pickup_api.seed.school()
    path = f"/api/pickup/turnstile/monitor/{school.id}/{MONITOR_TOKEN}/dao"
    for body in (b"{not json", b"\xff\xfe"):
        response = await pickup_api.http.post(path, content=body,
                                              headers={"content-type": "application/json"})
        assert response.status_code == 422, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["code"] == "request.invalid"
    still = await pickup_api.http.post(path, json={})
    assert (still.status_code, still.json()) == (200, {"pickedUp": []})
