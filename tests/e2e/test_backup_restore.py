"""Back up a running `esteira dev`, wipe its data, restore, and the open waits finish."""

from __future__ import annotations

import base64
import email
import email.policy
import json
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from activities.signer.crypto.samples import make_pdf
from services.dashboard.passwords import hash_password
from services.sisbajud_cli import DEMO_ORDER_ID
from tests.e2e.test_dev import ESTEIRA, DevRun
from tests.support.ports import free_ports

pytestmark = pytest.mark.e2e
DEADLINE_SECONDS = 90
TOKEN_LINK = re.compile(r"/approve/[\w-]+#([\w-]+)")
# The first block write meets a key still in flight: its effect is unknown, and after two
# heartbeats the order waits for a person.
KEY_IN_FLIGHT = {"route": "transactions.create.block", "kind": "error", "status": 409,
                 "code": "0084"}
OPERATORS = json.dumps([{"name": name, "password_hash": hash_password(f"{name}-password")}
                        for name in ("ana", "bruno")])
NO_EFFECT = {"reason": "the statement shows no block", "effect": "NONE",
             "reasonCode": "NO_BALANCE", "executedAmount": "0"}


def _poll(fetch: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        found = fetch()
        if found:
            return found
        time.sleep(0.3)
    pytest.fail(f"{what} within {DEADLINE_SECONDS}s")


class Host:
    """The REST calls this test makes on one `esteira dev`."""

    def __init__(self, run: DevRun) -> None:
        self.run = run
        self.api = f"http://127.0.0.1:{run.api}/api"
        self.key = {"X-API-Key": run.api_key()}

    def as_operator(self, name: str) -> dict[str, str]:
        """The API key plus a named operator's HTTP Basic credential."""
        pair = base64.b64encode(f"{name}:{name}-password".encode()).decode()
        return {**self.key, "Authorization": f"Basic {pair}"}

    def get(self, path: str) -> httpx.Response:
        return httpx.get(f"{self.api}{path}", headers=self.key, timeout=10)

    def job(self, job_id: str) -> dict[str, Any]:
        return self.get(f"/jobs/{job_id}").json()

    def order(self) -> dict[str, Any]:
        answer = self.get(f"/sisbajud/orders/{DEMO_ORDER_ID}")
        return answer.json() if answer.status_code == 200 else {}

    def open_decisions(self) -> list[dict[str, Any]]:
        return self.get("/sisbajud/human-decisions?open=true").json()["items"]


def _cli(run: DevRun, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ESTEIRA, *args], cwd=run.workdir, env=run.env, capture_output=True,
                          text=True, timeout=180)


def _hold_a_job_for_approval(host: Host) -> tuple[str, str]:
    """A PDF uploaded to the default profile, which now asks Ana: (job id, Ana's token)."""
    approval = {"approvers": [{"name": "Ana", "email": "ana@example.com"}], "quorum": 1}
    edited = httpx.patch(f"{host.api}/profiles/default", headers=host.key,
                         json={"approval": approval}, timeout=10)
    assert edited.status_code == 200, edited.text
    uploaded = httpx.post(f"{host.api}/files", headers=host.key, timeout=30,
                          files={"file": ("contrato.pdf", make_pdf(20_000, pages=2))})
    assert uploaded.status_code == 201, uploaded.text
    job_id = uploaded.json()["id"]
    _poll(lambda: host.job(job_id)["status"] == "AwaitingApproval", "the job held")
    mail = host.run.workdir / "data" / "mail"
    found = _poll(lambda: [TOKEN_LINK.search(_body(p)) for p in sorted(mail.glob("*.eml"))],
                  "the approval e-mail")
    return job_id, found[0].group(1)


def _body(path: Path) -> str:
    message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    return message.get_body(("plain",)).get_content()  # type: ignore[union-attr]


def _hold_an_order_for_a_person(host: Host) -> int:
    """The demo order's block meets an unknown effect: (the open decision's id)."""
    midaz = f"http://127.0.0.1:{host.run.midaz}"
    httpx.post(f"{midaz}/_sim/faults", json=KEY_IN_FLIGHT, timeout=10).raise_for_status()
    _poll(lambda: _cli(host.run, "hub", "send").returncode == 0, "the notice accepted")
    _poll(lambda: host.order().get("state") == "HUMAN_DECISION", "the order waiting")
    (decision,) = _poll(host.open_decisions, "the open decision")
    return decision["id"]


def test_open_waits_survive_a_backup_a_wipe_and_a_restore(tmp_path):
    ports = free_ports(4)
    run = DevRun(tmp_path, ports)
    run.env.update({"ESTEIRA_DASHBOARD__OPERATORS": OPERATORS,
                    "ESTEIRA_SISBAJUD__TICK_EVERY_SECONDS": "1",
                    "ESTEIRA_SISBAJUD__HEARTBEAT_EVERY_SECONDS": "0.5",
                    "ESTEIRA_SISBAJUD__HUMAN_DECISION_AFTER_BEATS": "2"})
    archive = tmp_path / "backups" / "esteira.tar.gz"
    data = tmp_path / "data"
    run.start()
    try:
        run.wait_ready()
        host = Host(run)
        job_id, token = _hold_a_job_for_approval(host)
        decision_id = _hold_an_order_for_a_person(host)

        made = _cli(run, "backup", "-o", str(archive))  # while everything runs
        assert made.returncode == 0, made.stderr
        assert "store/esteira.db" in made.stdout and "temporal/temporal.db" in made.stdout
        refused = _cli(run, "restore", str(archive), "--force")
        assert refused.returncode == 1
        assert refused.stderr.startswith("esteira restore: refused: Esteira is running on")
        assert run.stop() == 0
    finally:
        if run.process and run.process.poll() is None:
            run.process.kill()

    shutil.rmtree(data)
    restored = _cli(run, "restore", str(archive))
    assert restored.returncode == 0, restored.stderr
    for private in ("db/esteira.db", "temporal/temporal.db", "keys/temporal-payload.keys",
                    "api-key", "pki/signer.pfx"):
        assert (data / private).stat().st_mode & 0o777 == 0o600, private

    again = DevRun(tmp_path, ports)
    again.env = run.env
    again.start()
    try:
        again.wait_ready()
        host = Host(again)
        assert host.job(job_id)["status"] == "AwaitingApproval"
        assert [d["id"] for d in host.open_decisions()] == [decision_id]
        approved = httpx.post(f"{host.api}/approvals/{job_id}/approve", timeout=10,
                              headers={"Authorization": f"Bearer {token}"})
        assert approved.status_code == 200, approved.text
        done = _poll(lambda: (j := host.job(job_id))["status"] in ("Completed", "Failed") and j,
                     "the approved job finished")
        assert done["status"] == "Completed", done
        assert list((data / "storage" / "output").glob("contrato*.pdf"))

        # A write whose effect is unknown may have moved money: two people resolve it.
        resolution = f"{host.api}/sisbajud/human-decisions/{decision_id}/resolution"
        for person, status in (("ana", 202), ("bruno", 200)):
            answer = httpx.post(resolution, headers=host.as_operator(person), json=NO_EFFECT,
                                timeout=30)
            assert answer.status_code == status, answer.text
        order = _poll(lambda: (o := host.order()).get("state") == "RESOLVED" and o,
                      "the order resolved")
        assert (order["effect"], order["reasonCode"]) == ("NONE", "NO_BALANCE")
        assert host.open_decisions() == []
        assert again.stop() == 0
    finally:
        if again.process and again.process.poll() is None:
            again.process.kill()
