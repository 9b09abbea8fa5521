"""What the benchmarks share: `esteira dev` in a scratch folder, its processes' CPU, no-op load."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from shared.contracts.ops import TASK_QUEUE, ProbeResult, RunProbeInput  # noqa: E402
from tests.support.ports import free_ports  # noqa: E402


@dataclass(frozen=True)
class EsteiraDev:
    """A running `esteira dev`: its supervisor's pid, its folder and its ports."""

    pid: int
    workdir: Path
    api: int
    temporal: int

    @property
    def temporal_address(self) -> str:
        """The Temporal frontend, for a client."""
        return f"127.0.0.1:{self.temporal}"


@contextmanager
def esteira_dev(extra_env: dict[str, str] | None = None, *, keep: bool = False,
                prefix: str = "esteira-bench-") -> Iterator[EsteiraDev]:
    """`esteira dev` on free ports in a new folder, ready; stopped (and the folder removed)."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    api, grpc, temporal, ui = free_ports(4)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ESTEIRA_")},
           "ESTEIRA_DATA_DIR": str(workdir / "data"), "ESTEIRA_PORTS__API": str(api),
           "ESTEIRA_PORTS__GRPC": str(grpc), "ESTEIRA_PORTS__TEMPORAL": str(temporal),
           "ESTEIRA_PORTS__TEMPORAL_UI": str(ui), "PYTHONPATH": str(REPO), **(extra_env or {})}
    with (workdir / "dev.log").open("w") as log:
        dev = subprocess.Popen([sys.executable, "-m", "services.cli", "dev"], cwd=workdir,
                               env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(240):
            try:
                if httpx.get(f"http://127.0.0.1:{api}/api/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            raise SystemExit(f"esteira dev not ready; see {workdir / 'dev.log'}")
        yield EsteiraDev(dev.pid, workdir, api, temporal)
    finally:
        dev.send_signal(signal.SIGTERM)
        dev.wait(120)
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def percentiles(values: list[float]) -> tuple[float, float]:
    """Median and 99th percentile."""
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1,
                                                   round(0.99 * (len(ordered) - 1)))]


async def noop_workflows(address: str, n: int, rate: float | None = None) -> dict:
    """N one-activity no-op workflows (`ops-probe`): started at once, or `rate` a second."""
    client = await Client.connect(address, data_converter=pydantic_data_converter)
    started = time.perf_counter()
    latencies: list[float] = []

    async def one(i: int) -> None:
        if rate:
            await asyncio.sleep(i / rate)
        t0 = time.perf_counter()
        await client.execute_workflow("ops-probe", RunProbeInput(payload=str(i)),
                                      id=f"bench-noop-{uuid.uuid4()}", task_queue=TASK_QUEUE,
                                      result_type=ProbeResult)
        latencies.append(time.perf_counter() - t0)

    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - started
    p50, p99 = percentiles(latencies)
    return {"docs_per_s": n / elapsed, "p50_ms": p50 * 1000, "p99_ms": p99 * 1000}


def tree_pids(root: int) -> list[int]:
    """A process and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def tree_rss_mb(root: int) -> float:
    """Resident memory of a process and all its descendants."""
    total = 0
    for pid in tree_pids(root):
        try:
            stat = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(stat[21]) * os.sysconf("SC_PAGE_SIZE")
    return total / 1024 / 1024


def tree_argv(root: int) -> dict[int, list[str]]:
    """Every process of the tree, with its command line."""
    found: dict[int, list[str]] = {}
    for pid in tree_pids(root):
        try:
            argv = (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        found[pid] = [a.decode(errors="replace") for a in argv if a]
    return found


def cpu_seconds(stat: Path) -> float:
    """User + system CPU seconds from a /proc `stat` file (of a process or a thread)."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu(root: int) -> dict[str, float]:
    """CPU seconds (user + system) per process of the tree, keyed by a short role name."""
    usage: dict[str, float] = {}
    for pid, argv in tree_argv(root).items():
        try:
            seconds = cpu_seconds(Path("/proc") / str(pid) / "stat")
        except OSError:
            continue
        role = role_of(argv)
        usage[role] = usage.get(role, 0.0) + seconds
    return usage


def role_of(argv: list[str]) -> str:
    """`temporal`, `worker`, `watcher`, `signing pool`... from a command line."""
    if argv and argv[0].endswith("temporal"):
        return "temporal server"
    if "multiprocessing" in " ".join(argv):
        return "signing pool"
    for word in ("worker", "watcher", "api", "grpc", "webhook", "simulator", "dev"):
        if word in argv:
            return word
    return "other"
