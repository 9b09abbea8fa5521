"""kill -9 of each child of `esteira dev` during a 50-document drop: nothing lost or doubled."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from activities.signer.crypto.samples import make_pdf
from tests.e2e.test_dev import DevRun
from tests.support.ports import free_ports

pytestmark = pytest.mark.e2e
# The order kills happen in; each gets a share of the 50 documents, dropped around its kill.
CHILDREN = ("worker", "api", "grpc", "watcher", "webhook", "temporal")
DOCUMENTS = 50
RESTART_TIMEOUT = 30.0
SETTLE_TIMEOUT = 180.0
TERMINAL = {"Completed", "Failed", "Canceled"}


def _batches() -> dict[str, list[str]]:
    names: dict[str, list[str]] = {child: [] for child in CHILDREN}
    for i in range(DOCUMENTS):
        child = CHILDREN[i % len(CHILDREN)]
        names[child].append(f"{child}-{i:02d}.pdf")
    return names


def _pids(run: DevRun, name: str) -> list[int]:
    return [int(pid) for pid in re.findall(rf"Started {re.escape(name)} \(pid (\d+)\)", run.text())]


def _kill_and_wait_for_restart(run: DevRun, name: str) -> float:
    """SIGKILL the child's current process; seconds until the supervisor started a new one."""
    before = _pids(run, name)
    assert before, f"no {name} child in the log:\n{run.text()}"
    os.kill(before[-1], signal.SIGKILL)
    killed_at = time.monotonic()
    while len(_pids(run, name)) == len(before):
        if time.monotonic() - killed_at > RESTART_TIMEOUT:
            pytest.fail(f"{name} was not restarted within {RESTART_TIMEOUT}s:\n"
                        f"{run.text()[-5000:]}")
        time.sleep(0.1)
    restarted_in = time.monotonic() - killed_at
    while _group_members(before[-1]):
        assert time.monotonic() - killed_at < RESTART_TIMEOUT, \
            f"{name}'s orphans outlived it: {_group_members(before[-1])}"
        time.sleep(0.1)
    return restarted_in


def _group_members(pgid: int) -> list[int]:
    """Live processes still in the process group a killed child led (its pool, say)."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry.name))
    return members


def _wait_for_work_in_flight(db: Path, names: list[str], timeout: float = 15.0) -> str:
    """Wait until one of `names` is being signed, so the kill lands mid-job; its status."""
    deadline = time.monotonic() + timeout
    seen = ""
    while time.monotonic() < deadline:
        if db.exists():
            statuses = {status for name, status, _, _ in _jobs(db) if name in names}
            seen = ",".join(sorted(statuses))
            if statuses & {"Processing", "Verifying"}:
                return seen
        time.sleep(0.02)
    return seen or "not yet enqueued"


def _jobs(db: Path) -> list[tuple[str, str, str | None, str]]:
    with sqlite3.connect(db, timeout=10) as connection:
        return connection.execute("SELECT file_name, status, error_code, id FROM jobs").fetchall()


def test_every_child_killed_during_a_drop_loses_and_doubles_nothing(tmp_path):
    run = DevRun(tmp_path, free_ports(4))
    # A lost worker's job is noticed after this many seconds (30 by default).
    run.env["ESTEIRA_PIPELINE__HEARTBEAT_TIMEOUT_SECONDS"] = "5"
    run.env["ESTEIRA_PIPELINE__STABILITY_WINDOW_SECONDS"] = "0.3"
    run.start()
    try:
        run.wait_ready()
        storage = tmp_path / "data" / "storage"
        inbox = storage / "input" / "inbox"
        pdf = make_pdf(20_000, pages=2)
        db = tmp_path / "data" / "db" / "esteira.db"
        restarts: dict[str, float] = {}
        at_kill: dict[str, str] = {}
        for child, names in _batches().items():
            half = len(names) // 2
            for name in names[:half]:
                (inbox / name).write_bytes(pdf)
            at_kill[child] = _wait_for_work_in_flight(db, names[:half])
            restarts[child] = _kill_and_wait_for_restart(run, child)
            for name in names[half:]:
                (inbox / name).write_bytes(pdf)

        deadline = time.monotonic() + SETTLE_TIMEOUT
        while time.monotonic() < deadline:
            jobs = _jobs(db)
            if len(jobs) >= DOCUMENTS and all(status in TERMINAL for _, status, _, _ in jobs):
                break
            time.sleep(1)
        jobs = _jobs(db)
        stuck = [(name, status) for name, status, _, _ in jobs if status not in TERMINAL]
        assert not stuck, f"jobs left non-terminal: {stuck}\n{run.text()[-5000:]}"
        assert sorted(name for name, *_ in jobs) == sorted(
            name for names in _batches().values() for name in names), "a document was lost"

        outputs = sorted(p.name for p in (storage / "output").iterdir())
        completed = {name for name, status, _, _ in jobs if status == "Completed"}
        assert outputs == sorted(f"{Path(n).stem}.signed.pdf" for n in completed), \
            "every completed document has exactly one output, and nothing else was signed"
        for name, status, code, job_id in jobs:
            if status != "Completed":
                assert (status, code) == ("Failed", "job.interrupted"), (name, status, code)
                assert (storage / "error" / job_id / name).exists(), f"{name} kept in error/"
        counts = {child: Counter() for child in CHILDREN}
        for name, status, code, _ in jobs:
            counts[name.split("-")[0]][code or status] += 1
        print("\ncrash matrix (killed child: its batch's outcomes):")
        for child in CHILDREN:
            print(f"  {child:8} {dict(counts[child])}; killed while its batch was "
                  f"{at_kill[child]}; restarted in {restarts[child]:.1f}s")
        # Every client (API, gRPC, watcher, worker) is back on the restarted Temporal server.
        ready = httpx.get(f"http://127.0.0.1:{run.api}/api/ready", timeout=10)
        assert ready.status_code == 200, ready.text
        assert run.stop(signal.SIGTERM) == 0
    finally:
        if run.process and run.process.poll() is None:
            run.process.kill()
