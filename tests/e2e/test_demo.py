"""The first run shows all three systems working, under a real `esteira dev`, and a restart
adds nothing twice."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from services.dev.demo import DEMO_FILE
from services.dev.demo_pickup import SCHOOL
from services.dev.sisbajud_sims import DEMO_ORDER_ID, DEMO_PERSON_ORDER_ID
from tests.e2e.test_dev import DevRun
from tests.support.ports import free_ports

pytestmark = pytest.mark.timeout(600)


def _poll(condition: Callable[[], Any], what: str, timeout: float = 150) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(1)


class Api:
    """The REST API of one `esteira dev`, with its generated key."""

    def __init__(self, run: DevRun) -> None:
        self.base = f"http://127.0.0.1:{run.api}/api"
        self.headers = {"X-API-Key": run.api_key()}

    def get(self, path: str, **params: Any) -> Any:
        answer = httpx.get(f"{self.base}{path}", params=params, headers=self.headers,
                           timeout=10)
        answer.raise_for_status()
        return answer.json()

    def demo_jobs(self) -> list[dict]:
        return self.get("/jobs", text=DEMO_FILE)["items"]

    def order_state(self, order_id: str) -> str | None:
        try:
            return self.get(f"/sisbajud/orders/{order_id}").get("state")
        except httpx.HTTPStatusError:
            return None

    def demo_schools(self) -> list[dict]:
        """The demo school, found as the school of the demo roster's students."""
        ids = {s["schoolId"] for s in self.get("/pickup/students", limit=500)["items"]
               if (s.get("registration") or "").startswith("DEMO-")}
        schools = [self.get(f"/pickup/schools/{school_id}") for school_id in sorted(ids)]
        return [s for s in schools if s["name"] == SCHOOL]

    def board(self, school_id: int) -> dict[str, str]:
        return {s["name"]: s["state"]
                for s in self.get(f"/pickup/schools/{school_id}/board")["students"]}


def _seen_working(api: Api) -> int:
    """Wait until each system's demo has run its course; the demo school's id."""
    (job,) = _poll(lambda: [j for j in api.demo_jobs() if j["status"] == "Completed"],
                   "the demo PDF signed")
    assert job["fileName"] == DEMO_FILE
    _poll(lambda: api.order_state(DEMO_ORDER_ID) == "RESOLVED", "the demo order resolved")
    _poll(lambda: api.order_state(DEMO_PERSON_ORDER_ID) == "HUMAN_DECISION",
          "the second order waiting for a person")
    decisions = api.get("/sisbajud/human-decisions", open="true")["items"]
    assert [d["orderId"] for d in decisions] == [DEMO_PERSON_ORDER_ID]
    (school,) = _poll(api.demo_schools, "the demo school")
    states = _poll(lambda: (b := api.board(school["id"])) and "PICKED_UP" in b.values() and b,
                   "a demo student out through the turnstile")
    assert sorted(states.values()) == ["AWAITING", "PICKED_UP", "READY"], states
    return school["id"]


def test_the_first_run_shows_each_system_working_and_a_restart_adds_nothing(tmp_path):
    run = DevRun(tmp_path, free_ports(4))
    run.env["ESTEIRA_DEMO__ENABLED"] = "true"
    run.start()
    try:
        run.wait_ready()
        api = Api(run)
        school_id = _seen_working(api)
        banner = run.text()
        for system in ("signer", "sisbajud", "pickup"):
            assert f"open: {system}" in banner
    finally:
        run.stop()
    again = DevRun(tmp_path, [run.api, run.grpc, run.temporal, run.ui])
    again.env["ESTEIRA_DEMO__ENABLED"] = "true"
    again.start()
    try:
        again.wait_ready()
        api = Api(again)
        time.sleep(10)  # the demo task has run again by now
        assert len(api.demo_jobs()) == 1
        assert len(api.demo_schools()) == 1
        assert len(api.board(school_id)) == 3
        assert len(api.get("/sisbajud/human-decisions")["items"]) == 1
        assert "Demo:" in again.text()
    finally:
        again.stop()
