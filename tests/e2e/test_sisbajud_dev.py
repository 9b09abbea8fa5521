"""`esteira dev` on its own: `esteira hub send` a notice, the demo order ends in a result."""

from __future__ import annotations

import subprocess
import time
from decimal import Decimal

import httpx
import pytest

from services.sisbajud_cli import DEMO_ORDER_ID
from tests.e2e.test_dev import ESTEIRA, DevRun
from tests.support.ports import free_ports

pytestmark = pytest.mark.e2e
DEADLINE_SECONDS = 60


def _poll(fetch, what: str):
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        found = fetch()
        if found:
            return found
        time.sleep(0.3)
    pytest.fail(f"{what} within {DEADLINE_SECONDS}s")


def test_a_signed_notice_becomes_a_block_and_a_result(tmp_path):
    run = DevRun(tmp_path, free_ports(4))
    run.env["ESTEIRA_SISBAJUD__TICK_EVERY_SECONDS"] = "1"
    run.start()
    try:
        run.wait_ready()
        sent = _poll(lambda: (r := subprocess.run([*ESTEIRA, "hub", "send"], cwd=tmp_path,
                                                  env=run.env, capture_output=True, text=True,
                                                  timeout=60)).returncode == 0 and r,
                     "the gateway accepting the notice")
        assert sent.stdout.startswith("200") and "accepted" in sent.stdout
        key = {"X-API-Key": run.api_key()}
        api = f"http://127.0.0.1:{run.api}/api/sisbajud"

        def resolved():
            response = httpx.get(f"{api}/orders/{DEMO_ORDER_ID}", headers=key, timeout=5)
            return response.status_code == 200 and response.json()["state"] == "RESOLVED" \
                and response.json()

        order = _poll(resolved, "the demo order resolved")
        # The demo subject has 850 of own funds outside its salary account.
        assert (order["effect"], order["reasonCode"]) == ("PARTIAL", "BLOCKED_PARTIAL")
        assert Decimal(order["executedAmount"]) == Decimal(850)
        final = f"{DEMO_ORDER_ID}:1:1"

        def delivered():
            keys = httpx.get(f"http://127.0.0.1:{run.mensageria}/_sim/results",
                             timeout=5).json()["keys"]
            return final in keys and keys

        # The progress states went out before the final result, each under its own key.
        assert _poll(delivered, "the result delivered") == sorted(
            [final, f"{DEMO_ORDER_ID}:1:accepted", f"{DEMO_ORDER_ID}:1:executing"])
        metrics = httpx.get(f"http://127.0.0.1:{run.api}/api/metrics", timeout=5).text
        assert 'esteira_sisbajud_notices_total{code="200"}' in metrics
        assert run.stop() == 0
    finally:
        if run.process and run.process.poll() is None:
            run.process.kill()
