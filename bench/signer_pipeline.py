"""End-to-end signing throughput on `esteira dev` defaults, beside two baselines in the same run.

(a) the same documents signed and verified in one process with pyHanko, no Temporal;
(b) one-activity no-op workflows on the same Temporal server (the dev server's ceiling);
and the pipeline: N PDFs of ~100 KB dropped into the watched inbox, drop -> Completed.

Usage: .venv/bin/python bench/signer_pipeline.py [--n 500] [--keep]
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

import httpx
from cryptography import x509
from sqlalchemy import create_engine, text
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from activities.signer.crypto import pades, samples  # noqa: E402
from activities.signer.crypto.signer import load_pfx_signer  # noqa: E402
from activities.signer.crypto.verify import verify_pades  # noqa: E402
from shared.contracts.ops import TASK_QUEUE, ProbeResult, RunProbeInput  # noqa: E402
from tests.support.ports import free_ports  # noqa: E402


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1,
                                                   round(0.99 * (len(ordered) - 1)))]


def baseline_a(docs: list[bytes], pki: Path) -> dict:
    """Sign + verify each document in this process (keys loaded once, fixed reserve)."""
    password = (pki / "signer.password").read_text().strip()
    signer = load_pfx_signer(pki / "signer.pfx", password)
    roots = [x509.load_pem_x509_certificate((pki / "ca.pem").read_bytes())]
    reserve = pades.bytes_reserved_for(signer)
    times = []
    for doc in docs:
        start = time.perf_counter()
        signed = pades.sign_pades(doc, signer, bytes_reserved=reserve)
        assert verify_pades(signed, trust_roots=roots).ok
        times.append(time.perf_counter() - start)
    p50, p99 = _percentiles(times)
    return {"docs_per_s": len(docs) / sum(times), "p50_ms": p50 * 1000, "p99_ms": p99 * 1000}


async def baseline_b(address: str, n: int) -> dict:
    """N one-activity no-op workflows started at once on the same server."""
    client = await Client.connect(address, data_converter=pydantic_data_converter)
    started = time.perf_counter()
    latencies: list[float] = []

    async def one(i: int) -> None:
        t0 = time.perf_counter()
        await client.execute_workflow("ops-probe", RunProbeInput(payload=str(i)),
                                      id=f"bench-noop-{uuid.uuid4()}", task_queue=TASK_QUEUE,
                                      result_type=ProbeResult)
        latencies.append(time.perf_counter() - t0)

    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - started
    p50, p99 = _percentiles(latencies)
    return {"docs_per_s": n / elapsed, "p50_ms": p50 * 1000, "p99_ms": p99 * 1000}


def pipeline(data: Path, docs: list[bytes], sample_rss) -> dict:
    """Drop every document into the inbox and wait until all are Completed."""
    inbox = data / "storage" / "input" / "inbox"
    engine = create_engine(f"sqlite:///{data / 'db' / 'esteira.db'}")
    dropped: dict[str, float] = {}
    start = time.time()
    for i, doc in enumerate(docs):
        name = f"bench-{i:05d}.pdf"
        temporary = inbox / f".{name}.tmp"  # ignored by the watcher until renamed
        temporary.write_bytes(doc)
        temporary.rename(inbox / name)
        dropped[name] = time.time()
    done: dict[str, float] = {}
    while len(done) < len(docs):
        sample_rss()
        with engine.connect() as connection:
            rows = connection.execute(text(
                "SELECT file_name, status, completed_at FROM jobs "
                "WHERE status IN ('Completed', 'Failed')")).all()
        failed = [r.file_name for r in rows if r.status == "Failed"]
        if failed:
            raise SystemExit(f"{len(failed)} job(s) failed, e.g. {failed[0]}")
        for row in rows:
            if row.file_name not in done:
                done[row.file_name] = _epoch(row.completed_at)
        time.sleep(0.5)
    elapsed = max(done.values()) - start
    latencies = [done[name] - dropped[name] for name in dropped]
    p50, p99 = _percentiles(latencies)
    return {"docs_per_s": len(docs) / elapsed, "p50_ms": p50 * 1000, "p99_ms": p99 * 1000}


def _epoch(value) -> float:
    from datetime import UTC, datetime

    moment = datetime.fromisoformat(str(value)) if not isinstance(value, datetime) else value
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _tree_rss_mb(root: int) -> float:
    """Resident memory of a process and all its descendants."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(stat[1]), []).append(int(entry.name))
            rss[int(entry.name)] = int(stat[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total / 1024 / 1024


def _tree_cpu(root: int) -> dict[str, float]:
    """CPU seconds (user + system) per process of the tree, keyed by a short role name."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    ticks = os.sysconf("SC_CLK_TCK")
    usage: dict[str, float] = {}
    stack = [root]
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        try:
            fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
            argv = (Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        role = _role([a.decode(errors="replace") for a in argv if a])
        usage[role] = usage.get(role, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return usage


def _role(argv: list[str]) -> str:
    """`temporal`, `worker`, `watcher`, `signing pool`... from a command line."""
    if argv and argv[0].endswith("temporal"):
        return "temporal server"
    if "multiprocessing" in " ".join(argv):
        return "signing pool"
    for word in ("worker", "watcher", "api", "grpc", "webhook", "simulator", "dev"):
        if word in argv:
            return word
    return "other"


def _cpu_delta(before: dict[str, float], after: dict[str, float], n: int) -> str:
    """Milliseconds of CPU per document, per role, busiest first."""
    delta = {role: after.get(role, 0.0) - before.get(role, 0.0) for role in after}
    parts = [f"{role} {seconds * 1000 / n:.0f}" for role, seconds in
             sorted(delta.items(), key=lambda item: -item[1]) if seconds > 0.005]
    return f"total {sum(delta.values()) * 1000 / n:.0f} ms/doc: " + ", ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="esteira-bench-"))
    api, grpc, temporal, ui = free_ports(4)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ESTEIRA_")},
           "ESTEIRA_DATA_DIR": str(workdir / "data"), "ESTEIRA_PORTS__API": str(api),
           "ESTEIRA_PORTS__GRPC": str(grpc), "ESTEIRA_PORTS__TEMPORAL": str(temporal),
           "ESTEIRA_PORTS__TEMPORAL_UI": str(ui), "PYTHONPATH": str(REPO)}
    log = (workdir / "dev.log").open("w")
    dev = subprocess.Popen([sys.executable, "-m", "services.cli", "dev"], cwd=workdir, env=env,
                           stdout=log, stderr=subprocess.STDOUT)
    peak = [0.0]

    def sample_rss() -> None:
        peak[0] = max(peak[0], _tree_rss_mb(dev.pid))

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
        docs = [samples.make_pdf(100_000) for _ in range(args.n)]
        print(f"{args.n} PDFs of ~{len(docs[0]) // 1024} KB, {os.cpu_count()} cores, "
              f"esteira dev defaults (MaxConcurrency 4, SQLite)")
        results = {"(a) one process, pyHanko": baseline_a(docs, workdir / "data" / "pki")}
        cpu = [_tree_cpu(dev.pid)]
        results["(b) no-op workflows"] = asyncio.run(baseline_b(f"127.0.0.1:{temporal}",
                                                                args.n))
        cpu.append(_tree_cpu(dev.pid))
        sample_rss()
        results["pipeline, drop -> Completed"] = pipeline(workdir / "data", docs, sample_rss)
        cpu.append(_tree_cpu(dev.pid))
        width = max(map(len, results))
        print(f"{'':<{width}}  {'docs/s':>8} {'p50 ms':>9} {'p99 ms':>9}")
        for name, figures in results.items():
            print(f"{name:<{width}}  {figures['docs_per_s']:>8.1f} {figures['p50_ms']:>9.0f} "
                  f"{figures['p99_ms']:>9.0f}")
        ratio = (results["pipeline, drop -> Completed"]["docs_per_s"]
                 / results["(b) no-op workflows"]["docs_per_s"])
        print(f"pipeline / (b) = {ratio:.2f} (target >= 0.8); peak RSS of esteira dev "
              f"process tree = {peak[0]:.0f} MB")
        print(f"CPU of esteira dev during (b): {_cpu_delta(cpu[0], cpu[1], args.n)}")
        print(f"CPU of esteira dev during the pipeline: {_cpu_delta(cpu[1], cpu[2], args.n)}")
    finally:
        dev.send_signal(signal.SIGTERM)
        dev.wait(120)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
