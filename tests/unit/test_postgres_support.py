"""The PostgreSQL test tier removes the in-memory clusters that killed runs left behind."""

import os
import subprocess
import sys

from tests.support.postgres import _remove_abandoned

_HOUR_AGO = 3600


def _cluster(parent, name, pid, age):
    """A cluster folder whose pid file names `pid`, last touched `age` seconds ago."""
    root = parent / f"esteira-pg-{name}"
    (root / "data").mkdir(parents=True)
    (root / "data" / "postmaster.pid").write_text(f"{pid}\n/some/data\n")
    stamp = root.stat().st_mtime - age
    os.utime(root, (stamp, stamp))
    return root


def _dead_pid():
    """The pid of a process that has already exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_abandoned_clusters_go_and_live_or_young_ones_stay(tmp_path):
    abandoned = _cluster(tmp_path, "killed", _dead_pid(), _HOUR_AGO)
    running = _cluster(tmp_path, "running", os.getpid(), _HOUR_AGO)
    starting = _cluster(tmp_path, "starting", _dead_pid(), 0)
    unrelated = tmp_path / "someone-else"
    unrelated.mkdir()
    os.utime(unrelated, (0, 0))

    _remove_abandoned(tmp_path)

    assert not abandoned.exists()
    assert running.exists() and starting.exists() and unrelated.exists()
