"""The dev supervisor: restarts a crashed child, stops slow ones, leaves nothing behind."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time

from services.dev.supervisor import ChildSpec, Supervisor


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


async def _until(condition, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.05)


# A child that starts a grandchild holding its stdout (as a worker's signing pool and the
# multiprocessing resource tracker do), reports it, then is killed like an OOM kill would.
_LEAVES_AN_ORPHAN = """
    import os, signal, subprocess, sys, time
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    print(f"orphan {orphan.pid}", flush=True)
    time.sleep(0.3)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split()[2] != "Z"


async def test_output_reaches_the_sink_and_a_crash_is_restarted():
    lines: list[tuple[str, bool]] = []
    exited: list[int] = []
    supervisor = Supervisor(lambda line, console: lines.append((line, console)),
                            on_exit=exited.append)
    crashy = _python("print('up', flush=True); raise SystemExit(3)")
    await supervisor.start(ChildSpec("crashy", crashy))
    for _ in range(200):
        if len(set(exited)) >= 2:  # the child crashed, was restarted, and crashed again
            break
        await asyncio.sleep(0.05)
    await supervisor.stop()
    assert sum(1 for line, _ in lines if line == "up") >= 2
    assert all(console for _, console in lines)
    assert len(set(exited)) >= 2, "each exit is reported (its live metrics are dropped)"


async def test_foreign_output_is_wrapped_and_kept_off_the_console():
    lines: list[tuple[str, bool]] = []
    supervisor = Supervisor(lambda line, console: lines.append((line, console)))
    await supervisor.start(ChildSpec("temporal", _python(
        "import time; print('time=x level=ERROR msg=boom', flush=True); time.sleep(30)"),
        foreign_output=True))
    # Not the first line: a fork from this process (grpcio loaded by an earlier test) can
    # write a line of grpc's own before the child's.
    await _until(lambda: any("msg=boom" in line for line, _ in lines), "the child's line")
    await supervisor.stop()
    [line] = [line for line, _ in lines if "msg=boom" in line]
    assert "[ERR] time=x level=ERROR msg=boom" in line and 'Process: "temporal"}' in line
    assert all(console is False for _, console in lines)


async def test_a_child_ignoring_sigterm_is_killed_after_its_timeout():
    supervisor = Supervisor(lambda line, console: None)
    await supervisor.start(ChildSpec("stubborn", _python("""
        import signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print('ready', flush=True)
        time.sleep(60)
    """), stop_timeout=0.5))
    await asyncio.sleep(0.5)
    pid = supervisor.pid("stubborn")
    started = time.monotonic()
    await supervisor.stop()
    assert time.monotonic() - started < 5
    assert pid is not None and not _alive(pid)


def test_children_die_when_the_supervisor_is_killed(tmp_path):
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "supervise.py"
    script.write_text(textwrap.dedent(f"""
        import asyncio, sys
        from services.dev.supervisor import ChildSpec, Supervisor

        async def main():
            supervisor = Supervisor(lambda line, console: None)
            child = [sys.executable, "-c",
                     "import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
                     "time.sleep(60)"]
            await supervisor.start(ChildSpec("sleeper", child))
            await asyncio.sleep(60)

        asyncio.run(main())
    """))
    parent = subprocess.Popen([sys.executable, str(script)], cwd=os.getcwd())
    try:
        for _ in range(100):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.05)
        child_pid = int(pid_file.read_text())
        assert _alive(child_pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        for _ in range(100):
            if not _alive(child_pid):
                break
            time.sleep(0.05)
        assert not _alive(child_pid)
    finally:
        parent.kill()


async def test_a_killed_child_whose_orphan_holds_its_output_is_restarted_promptly():
    lines: list[str] = []
    exited: list[int] = []
    supervisor = Supervisor(lambda line, console: lines.append(line), on_exit=exited.append,
                            restart_delays=(0.2,))
    await supervisor.start(ChildSpec("worker", _python(_LEAVES_AN_ORPHAN)))
    first = supervisor.pid("worker")
    try:
        await _until(lambda: exited, "the exit was never seen (waited on the child's output)")
        await _until(lambda: supervisor.pid("worker") not in (None, first),
                     "the child was not restarted")
        orphan = int(next(line for line in lines if line.startswith("orphan ")).split()[1])
        await _until(lambda: not _alive(orphan), "the dead child's process group lives on")
        assert exited[0] == first
    finally:
        await supervisor.stop()


async def test_stop_ends_each_childs_whole_process_group():
    lines: list[str] = []
    supervisor = Supervisor(lambda line, console: lines.append(line))
    await supervisor.start(ChildSpec("worker", _python("""
        import subprocess, sys, time
        orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        print(f"orphan {orphan.pid}", flush=True)
        time.sleep(120)
    """), stop_timeout=5))
    await _until(lambda: lines, "the child never reported its orphan")
    orphan = int(lines[0].split()[1])
    await asyncio.wait_for(supervisor.stop(), 15)
    await _until(lambda: not _alive(orphan), "the stopped child's process group lives on")


async def test_the_restart_delay_grows_for_quick_crashes_and_resets_after_a_stable_run(caplog):
    caplog.set_level(logging.ERROR, logger="esteira.dev")
    exited: dict[str, list[int]] = {"quick": [], "stable": []}
    quick = Supervisor(lambda line, console: None, on_exit=exited["quick"].append,
                       restart_delays=(0.1, 30.0), stable_after=60)
    stable = Supervisor(lambda line, console: None, on_exit=exited["stable"].append,
                        restart_delays=(0.1, 30.0), stable_after=0.3)
    await quick.start(ChildSpec("quick", _python("raise SystemExit(3)")))
    await stable.start(ChildSpec("stable", _python("import time; time.sleep(0.6)")))
    try:
        await _until(lambda: len(exited["quick"]) >= 2, "the quick crasher was not restarted")
        await _until(lambda: len(exited["stable"]) >= 3, "the stable child was not restarted")
    finally:
        await quick.stop()
        await stable.stop()
    delays = {name: [r.getMessage().rsplit(" ", 1)[1] for r in caplog.records
                     if r.getMessage().startswith(f"{name} exited")]
              for name in ("quick", "stable")}
    assert delays["quick"][:2] == ["0.1s", "30s"]
    assert delays["stable"][:3] == ["0.1s", "0.1s", "0.1s"]
