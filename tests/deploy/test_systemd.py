"""The systemd target: the unit, its install script, and sd_notify over a real unix socket."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from services import systemd_notify
from services.dev.main import READY_TIMEOUT_SECONDS, WORKER_STOP_TIMEOUT
from tests.deploy.targets import REPO, parse_command, unit_command, unit_entries, unit_value
from tests.e2e.test_dev import DevRun
from tests.support.ports import free_ports

INSTALL = REPO / "deploy" / "systemd" / "install.sh"
# `esteira dev` gives Temporal this long after the workers (services/dev/main.py).
TEMPORAL_STOP_TIMEOUT = 20


@pytest.fixture
def notify_socket():
    """A bound datagram socket in a short path (sun_path holds 108 bytes)."""
    directory = tempfile.mkdtemp(prefix="sd-", dir="/tmp")
    path = os.path.join(directory, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(5)
    yield sock, path
    sock.close()
    shutil.rmtree(directory, ignore_errors=True)


def _fields(datagram: bytes) -> dict[str, str]:
    return dict(line.split("=", 1) for line in datagram.decode().splitlines())


def test_the_unit_is_a_notify_service_with_a_watchdog_that_drains_on_stop():
    unit = unit_entries()
    value = lambda key: unit_value(unit, "Service", key)  # noqa: E731
    assert value("Type") == "notify" and value("NotifyAccess") == "main"
    assert int(value("WatchdogSec")) > 0
    command = unit_command(unit)
    assert Path(command[0]).name == "esteira"
    assert parse_command(command[1:]).command == "dev"
    # Only the supervisor gets SIGTERM; it stops the workers (drain) before Temporal.
    assert value("KillMode") == "mixed" and value("KillSignal") == "SIGTERM"
    assert int(value("TimeoutStopSec")) > WORKER_STOP_TIMEOUT + TEMPORAL_STOP_TIMEOUT
    assert unit_value(unit, "Install", "WantedBy") == "multi-user.target"


def test_the_install_script_is_valid_bash_and_installs_what_the_unit_runs():
    subprocess.run(["bash", "-n", str(INSTALL)], check=True)
    script = INSTALL.read_text()
    prefix = re.search(r"^prefix=\$root(\S+)$", script, re.MULTILINE)[1]
    assert unit_command(unit_entries())[0] == f"{prefix}/venv/bin/esteira"
    assert "esteira.service" in script and (INSTALL.parent / "esteira.service").is_file()
    assert (INSTALL.parent / "esteira.env.example").is_file()
    assert "--upgrade" not in script


# Stand-ins for what install.sh calls on a real host; each logs its arguments, one line a call.
STUBS = {
    "id": 'log id "$@"; [ "${1:-}" = -u ] && echo 0; exit 0',
    "useradd": 'log useradd "$@"',
    "systemctl": 'log systemctl "$@"; [ "${1:-}" = is-active ] && exit "${SERVICE_ACTIVE:-0}"; '
                 'exit 0',
    "systemd-run": 'log systemd-run "$@"; exit "${BACKUP_EXIT:-0}"',
    "chown": 'log chown "$@"',
    # install(1) without owners: the stand-in user does not exist here.
    "install": 'log install "$@"; dirs=no; files=(); while [ $# -gt 0 ]; do case "$1" in '
               '-d) dirs=yes;; -o|-g|-m) shift;; *) files+=("$1");; esac; shift; done; '
               'if [ $dirs = yes ]; then mkdir -p "${files[@]}"; '
               'else cp "${files[0]}" "${files[1]}"; fi',
}
# The installed release's venv: its python (pip) and its `esteira`.
VENV_STUBS = {
    "python": 'log python "$@"',
    "esteira": 'log esteira "$@"; [ "$*" = "backup --help" ] && exit "${HAS_BACKUP:-0}"; exit 0',
}


def _stub(path: Path, body: str, calls: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/usr/bin/env bash\nlog() {{ echo "$*" >> {calls}; }}\n{body}\n')
    path.chmod(0o755)


def _install(tmp_path: Path, *, installed: bool = True, **env: str):
    """Run install.sh under a staging root with every system command stood in for."""
    root, calls = tmp_path / "root", tmp_path / "calls.log"
    for name, body in STUBS.items():
        _stub(tmp_path / "bin" / name, body, calls)
    venv = root / "opt" / "esteira" / "venv" / "bin"
    for name, body in VENV_STUBS.items():
        if installed or name == "python":
            _stub(venv / name, body, calls)
    store = root / "var" / "lib" / "esteira" / "data" / "db" / "esteira.db"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"store")
    result = subprocess.run(
        ["bash", str(INSTALL), "/src/esteira"], capture_output=True, text=True, timeout=60,
        env={**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}",
             "ESTEIRA_INSTALL_ROOT": str(root), **env})
    lines = calls.read_text().splitlines() if calls.exists() else []
    return result, lines, root


def _index(lines: list[str], start: str) -> int:
    return next(i for i, line in enumerate(lines) if line.startswith(start))


def test_an_upgrade_takes_an_esteira_backup_then_installs_the_locked_hashes(tmp_path):
    result, calls, root = _install(tmp_path)
    assert result.returncode == 0, result.stderr
    state = root / "var" / "lib" / "esteira"
    backup = calls[_index(calls, "systemd-run")]
    # As the service runs it: its user, environment file and data directory, while it runs.
    for part in ("--wait --pipe", "--uid=esteira --gid=esteira",
                 f"-p EnvironmentFile={root}/etc/esteira/esteira.env",
                 f"-E ESTEIRA_DATA_DIR={state}/data",
                 f"{root}/opt/esteira/venv/bin/esteira backup -o {state}/backups/"):
        assert part in backup, (part, backup)
    locked = _index(calls, "python -m pip --quiet --disable-pip-version-check install "
                           "--require-hashes -r ")
    assert calls[locked].endswith("/requirements-embedded.lock")
    package = _index(calls, "python -m pip --quiet --disable-pip-version-check install "
                            "--no-deps --force-reinstall /src/esteira")
    check = _index(calls, "python -m pip --quiet --disable-pip-version-check check")
    restart = _index(calls, "systemctl restart esteira")
    assert _index(calls, "systemd-run") < locked < package < check < restart
    assert not any("--upgrade" in line or "-U " in line for line in calls)
    assert "systemctl stop esteira" not in calls, "the service runs during the backup"


def test_a_failed_backup_stops_the_upgrade_before_anything_is_installed(tmp_path):
    result, calls, _ = _install(tmp_path, BACKUP_EXIT="1")
    assert result.returncode != 0
    assert not any(line.startswith("python -m pip") for line in calls)
    assert not any(line.startswith("systemctl restart") for line in calls)


def test_a_first_install_has_nothing_to_back_up(tmp_path):
    result, calls, _ = _install(tmp_path, installed=False, SERVICE_ACTIVE="3")
    assert result.returncode == 0, result.stderr
    assert not any(line.startswith(("systemd-run", "esteira")) for line in calls)
    assert any("--require-hashes" in line for line in calls)
    assert "install.sh: installed; start with: systemctl start esteira" in result.stdout


def test_a_release_without_esteira_backup_is_stopped_and_its_data_archived(tmp_path):
    result, calls, root = _install(tmp_path, HAS_BACKUP="2")
    assert result.returncode == 0, result.stderr
    (archive,) = (root / "var" / "lib" / "esteira" / "backups").glob("esteira-data-*.tar.gz")
    assert archive.stat().st_mode & 0o777 == 0o600
    names = subprocess.run(["tar", "tzf", str(archive)], capture_output=True, text=True,
                           check=True).stdout.split()
    assert "data/db/esteira.db" in names
    stop, locked = _index(calls, "systemctl stop esteira"), _index(calls, "python -m pip")
    assert stop < locked < _index(calls, "systemctl restart esteira")
    assert not any(line.startswith("systemd-run") for line in calls)


def test_without_a_lock_file_nothing_is_installed(tmp_path):
    result, calls, _ = _install(tmp_path, ESTEIRA_LOCK_FILE=str(tmp_path / "missing.lock"))
    assert result.returncode == 1
    assert result.stderr.strip() == (f"install.sh: no lock file at {tmp_path}/missing.lock "
                                     "(run from a checkout, or set ESTEIRA_LOCK_FILE)")
    assert not any(line.startswith(("python", "systemd-run", "useradd")) for line in calls)


def test_notify_is_a_no_op_outside_systemd(notify_socket):
    assert systemd_notify.notify("READY=1", environ={}) is False


def test_notify_sends_one_datagram_per_call(notify_socket):
    sock, path = notify_socket
    assert systemd_notify.ready("Service ready", environ={"NOTIFY_SOCKET": path})
    fields = _fields(sock.recv(4096))
    assert fields == {"READY": "1", "MAINPID": str(os.getpid()),
                      "STATUS": "Service ready"}
    assert systemd_notify.stopping(environ={"NOTIFY_SOCKET": path})
    assert _fields(sock.recv(4096))["STOPPING"] == "1"


def test_notify_reaches_an_abstract_socket():
    name = f"esteira-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        assert systemd_notify.notify("WATCHDOG=1", environ={"NOTIFY_SOCKET": "@" + name})
        assert sock.recv(64) == b"WATCHDOG=1"


def test_a_vanished_socket_is_logged_not_raised(caplog):
    assert systemd_notify.notify("READY=1", environ={"NOTIFY_SOCKET": "/nonexistent/x"}) is False
    assert "Could not notify systemd" in caplog.text


@pytest.mark.timeout(60)
def test_a_socket_nobody_reads_never_blocks_the_sender(notify_socket):
    _sock, path = notify_socket
    # A blocking send would hang here once the receive queue is full.
    results = [systemd_notify.notify("WATCHDOG=1", environ={"NOTIFY_SOCKET": path})
               for _ in range(5000)]
    assert results[0] is True and results[-1] is False


def test_watchdog_interval_is_half_the_timeout_and_only_for_this_process():
    assert systemd_notify.watchdog_interval({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert systemd_notify.watchdog_interval(
        {"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}) == 15.0
    assert systemd_notify.watchdog_interval(
        {"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid() + 1)}) is None
    assert systemd_notify.watchdog_interval({"WATCHDOG_USEC": "0"}) is None
    assert systemd_notify.watchdog_interval({}) is None


async def test_the_watchdog_pings_until_stopped(notify_socket):
    sock, path = notify_socket
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    feeder = asyncio.create_task(systemd_notify.keep_watchdog_fed(
        stop, environ={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "20000"}))
    pings = [await asyncio.wait_for(loop.sock_recv(sock, 64), 5) for _ in range(3)]
    stop.set()
    await asyncio.wait_for(feeder, 5)
    assert pings == [b"WATCHDOG=1"] * 3


@pytest.mark.e2e
def test_esteira_dev_reports_ready_only_after_bootstrap_and_stopping_on_sigterm(
        tmp_path, notify_socket):
    sock, path = notify_socket
    run = DevRun(tmp_path, free_ports(4))
    run.env.update({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "1000000"})
    run.start()
    try:
        before_ready: list[dict[str, str]] = []
        # The banner waits up to READY_TIMEOUT_SECONDS for /api/ready, then READY=1 follows.
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS + 150
        while True:
            assert time.monotonic() < deadline, f"no READY=1:\n{run.text()}"
            assert run.process.poll() is None, run.text()
            try:
                fields = _fields(sock.recv(4096))
            except TimeoutError:
                continue
            if "READY" in fields:
                break
            before_ready.append(fields)
        output = run.text()
        assert "Migrations applied" in output and "Service ready" in output
        assert "host mode" in output and "systemd" in output
        assert fields["MAINPID"] == str(run.process.pid)
        assert before_ready and all(f == {"WATCHDOG": "1"} for f in before_ready)
        assert _fields(sock.recv(4096)) == {"WATCHDOG": "1"}, "pings go on after READY"
        run.process.send_signal(signal.SIGTERM)
        after = [_fields(sock.recv(4096)) for _ in range(2)]
        assert {"STOPPING": "1", "STATUS": "Draining in-flight jobs"} in after
        # The drain can take WORKER_STOP_TIMEOUT plus Temporal's stop on a loaded machine.
        assert run.process.wait(WORKER_STOP_TIMEOUT + TEMPORAL_STOP_TIMEOUT + 90) == 0
    finally:
        if run.process.poll() is None:
            run.process.kill()
            run.process.wait()


def test_the_host_targets_an_existing_cluster_and_names_the_embedded_mode_as_the_other():
    """The env file picks `external` (TEMPORAL_ADDRESS required) and documents `embedded`
    with its limits; every Temporal connection name is Temporal's own."""
    from pydantic import ValidationError

    from shared.settings import Settings
    from tests.deploy.targets import SYSTEMD_ENV_FILE, env_file_keys

    text = SYSTEMD_ENV_FILE.read_text()
    assert {"ESTEIRA_TEMPORAL_SERVER__MODE", "TEMPORAL_ADDRESS"} <= env_file_keys(SYSTEMD_ENV_FILE)
    assert re.search(r"^ESTEIRA_TEMPORAL_SERVER__MODE=external$", text, re.MULTILINE)
    assert re.search(r"^# ESTEIRA_TEMPORAL_SERVER__MODE=embedded$", text, re.MULTILINE)
    documented = env_file_keys(SYSTEMD_ENV_FILE, commented=True)
    assert {"TEMPORAL_NAMESPACE", "TEMPORAL_API_KEY", "TEMPORAL_TLS_CLIENT_CERT_PATH",
            "TEMPORAL_TLS_SERVER_CA_CERT_PATH", "TEMPORAL_CONFIG_FILE",
            "TEMPORAL_PROFILE"} <= documented
    for limit in ("no high availability", "SQLite", "back that file up"):
        assert limit in text, limit
    for mode in ("embedded", "external"):
        assert Settings(temporal_server={"mode": mode}).temporal_server.mode == mode
    with pytest.raises(ValidationError):
        Settings(temporal_server={"mode": "dev"})
