"""A throwaway PostgreSQL server from Debian's binaries, for the PostgreSQL test tier."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# initdb refuses to run as root; Debian's package creates this account.
_UNPRIVILEGED_USER = "postgres"
_PREFIX = "esteira-pg-"
# A folder younger than this may belong to a run still between mkdtemp and pg_ctl start.
_ABANDONED_AFTER_SECONDS = 600


def _remove_abandoned(parent: Path) -> None:
    """Remove the clusters of killed runs: in /dev/shm their gigabytes would hold the memory."""
    for root in parent.glob(f"{_PREFIX}*"):
        try:
            if time.time() - root.stat().st_mtime < _ABANDONED_AFTER_SECONDS:
                continue
            if _postmaster_alive(root / "data" / "postmaster.pid"):
                continue
        except OSError:
            continue
        shutil.rmtree(root, ignore_errors=True)


def _postmaster_alive(pid_file: Path) -> bool:
    """Whether the postmaster named by the cluster's pid file still runs."""
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def find_bindir() -> Path | None:
    """The directory holding initdb/pg_ctl/postgres, if PostgreSQL is installed."""
    explicit = os.environ.get("ESTEIRA_TEST_PG_BINDIR")
    candidates = [explicit] if explicit else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(str(Path(os.path.realpath(initdb)).parent))
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").is_file() \
                and (Path(candidate) / "pg_ctl").is_file():
            return Path(candidate)
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class PostgresServer:
    """A running cluster in a temporary folder, trusting local connections."""

    bindir: Path
    root: Path
    port: int

    @property
    def admin_url(self) -> str:
        """URL of the maintenance database."""
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def url(self, database: str) -> str:
        """URL of a database on this server."""
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/{database}"

    @classmethod
    def start(cls, bindir: Path) -> PostgresServer:
        """initdb + pg_ctl start, as the unprivileged user when running as root."""
        # In memory where the machine allows: a test creates a database in ~20 ms there,
        # ~160 ms on disk, and the session's gigabytes go away in seconds at the end.
        memory = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        _remove_abandoned(Path(memory or tempfile.gettempdir()))
        root = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=memory))
        os.chmod(root, 0o777)
        server = cls(bindir, root, _free_port())
        data = root / "data"
        server._run("initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                    "--no-sync")
        server._run("pg_ctl", "-D", str(data), "-w", "-t", "60", "-l", str(root / "pg.log"),
                    "-o", f"-p {server.port} -h 127.0.0.1 -k {root} -c fsync=off "
                    "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
                    "start")
        return server

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        try:
            self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if os.geteuid() == 0:
            pwd.getpwnam(_UNPRIVILEGED_USER)
            command = ["runuser", "-u", _UNPRIVILEGED_USER, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if result.returncode != 0:
            detail = result.stderr or result.stdout
            raise RuntimeError(f"{tool} failed ({result.returncode}): {detail}")
