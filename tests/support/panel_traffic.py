"""The work that gives every Grafana panel its series: a court order executed and one parked
with an alarm, a pickup card moved to the turnstile, a schedule that misses its window."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleIntervalSpec,
    SchedulePolicy,
    ScheduleSpec,
)

from services.sisbajud_cli import DEMO_ORDER_ID

# An order the Mensageria serves but this executor can't read (no operation, institution or
# subject): its notice is parked with an ORDER_INVALID alarm by the gateway, or by the
# order's workflow when the executor's tick handed the notice on first. (A one-shot fault on
# the fetch would leave the workflow's own fetch a 404, withdrawn without an alarm.)
UNREADABLE_ORDER = "0190a000-0000-7000-8000-0000000e0422"
# Temporal's smallest catch-up window; runs falling due while the server is away longer than
# this are counted missed (`schedule_missed_catchup_window`, a series that exists only then).
CATCHUP_WINDOW = timedelta(seconds=10)
OUTAGE_SECONDS = CATCHUP_WINDOW.total_seconds() + 3
# `esteira hub send ARGS…` as the target runs it: (exit status, what it printed).
HubSend = Callable[..., tuple[int, str]]


def until(condition: Callable[[], Any], what: str, timeout: float = 120) -> Any:
    """`condition()` once it is truthy; fail naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(0.5)
    return value


def execute_an_order(api: str, api_key: str, mensageria: str, hub_send: HubSend) -> None:
    """The Hub's signed notice for the Mensageria simulator's demo order, executed to
    RESOLVED; then a notice for an order this executor can't read, parked with an alarm."""
    status, output = hub_send()
    assert status == 0 and "accepted" in output, output

    def resolved() -> bool:
        order = httpx.get(f"{api}/api/sisbajud/orders/{DEMO_ORDER_ID}",
                          headers={"X-API-Key": api_key}, timeout=10)
        return order.status_code == 200 and order.json()["state"] == "RESOLVED"

    until(resolved, "the demo order executed")
    seeded = httpx.post(f"{mensageria}/_sim/orders",
                        json={"orderId": UNREADABLE_ORDER, "revision": 1}, timeout=10)
    assert seeded.status_code == 201, seeded.text
    status, output = hub_send("--order-id", UNREADABLE_ORDER)
    assert status == 0 and "parked" in output, output


def move_a_pickup_card(api: str, api_key: str, turnstile: str) -> None:
    """A school on the turnstile, a student with a badge, a guardian's arrival, READY: the
    grant is delivered (or at least tried) on the turnstile."""
    key = {"X-API-Key": api_key}

    def ok(method: str, path: str, **kwargs: Any) -> dict:
        response = httpx.request(method, f"{api}/api/pickup{path}", timeout=15, **kwargs)
        assert response.status_code in (200, 201), (path, response.text)
        return response.json()

    school = ok("POST", "/schools", headers=key, json={"name": "Escola",
                                                       "turnstileUrl": turnstile})
    # The student's own badge: a READY grant holds it (no credential, no grant to deliver).
    student = ok("POST", "/students", headers=key,
                 json={"schoolId": school["id"], "name": "Ana", "cardValue": 7_000_001})
    guardian = ok("POST", "/guardians", headers=key, json={"name": "Maria"})
    ok("POST", "/links", headers=key, json={
        "studentId": student["id"], "guardianId": guardian["id"], "kind": "permanent"})
    token = ok("POST", f"/guardians/{guardian['id']}/tokens", headers=key, json={})["token"]
    ok("POST", "/guardian/arrivals", headers={"Authorization": f"Bearer {token}"},
       json={"studentIds": [student["id"]]})
    ok("POST", f"/students/{student['id']}/ready", headers=key, json={"version": 1})
    until(lambda: any(entry.get("attempts", 0) > 0 or entry.get("status") != "pending"
                      for entry in ok("GET", "/ledger", headers=key)["items"]),
          "the grant delivered to the turnstile")


async def schedule_a_run_every_second(address: str) -> None:
    """A schedule due every second (of a workflow nobody runs) with the smallest catch-up
    window: keep Temporal away longer than `CATCHUP_WINDOW` and its runs are missed."""
    for _ in range(300):
        try:
            client = await Client.connect(address)
            break
        except RuntimeError:
            await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"Temporal never answered on {address}")
    await client.create_schedule("panel-test-miss", Schedule(
        action=ScheduleActionStartWorkflow("NoSuchWorkflow", id="panel-test-miss",
                                           task_queue="panel-test-nobody"),
        spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(seconds=1))]),
        policy=SchedulePolicy(catchup_window=CATCHUP_WINDOW)))
    # Its first runs fall due before Temporal goes away.
    await asyncio.sleep(2)
