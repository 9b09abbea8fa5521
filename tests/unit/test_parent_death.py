"""A worker's signing-pool processes die with the worker, even under kill -9."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from activities.signer.worker import build as build_signer
from services.bootstrap import bootstrap
from services.worker.main import worker_deps
from shared.db.engine import create_engine, session_factory

REPO = Path(__file__).resolve().parents[2]
_PR_GET_PDEATHSIG = 2


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_pool_processes_die_when_their_parent_is_killed(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent("""
        import multiprocessing, os, sys, time
        from concurrent.futures import ProcessPoolExecutor
        from services.parent_death import exit_with

        if __name__ == "__main__":
            pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"),
                                       initializer=exit_with, initargs=(os.getpid(),))
            print(pool.submit(os.getpid).result(), flush=True)
            time.sleep(120)
    """))
    # Its own session, like a child of `esteira dev` or a systemd service: no group kill here.
    parent = subprocess.Popen([sys.executable, str(script)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                              start_new_session=True)
    try:
        pooled = int(parent.stdout.readline())
        assert _alive(pooled)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while _alive(pooled) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pooled), "the pool process outlived its parent"
    finally:
        parent.kill()
        parent.stdout.close()


def _parent_death_signal() -> int:
    value = ctypes.c_int()
    ctypes.CDLL("libc.so.6").prctl(_PR_GET_PDEATHSIG, ctypes.byref(value))
    return value.value


@pytest.fixture
def backend() -> str:
    """The pool doesn't depend on the store; one backend keeps this quick."""
    return "sqlite"


async def test_the_workers_signing_pool_is_killed_with_the_worker(settings):
    engine = create_engine(settings.sqlalchemy_url)
    await bootstrap(settings)
    deps = worker_deps(settings, session_factory(engine), "t", contextlib.AsyncExitStack())
    try:
        async with deps.resources:
            workers = await build_signer(deps)
            [pool] = {activity.__self__.pool for worker in workers
                      for activity in worker.activities if activity.__name__ == "process_job"}
            in_pool = await asyncio.get_running_loop().run_in_executor(
                pool, _parent_death_signal)
            assert in_pool == signal.SIGKILL
    finally:
        await engine.dispose()
