"""SISBAJUD executor: signed notices per second (durably recorded) beside an HMAC-only baseline,
and orders executed end to end per second, with the processes `esteira dev` runs.

Orders/s is printed beside a baseline on the same Temporal server (bench/sisbajud_baseline.py:
no-op workflows shaped like a real order's history), with CPU ms per order of each process and
when each stage saw its first and last order.

Usage: .venv/bin/python bench/sisbajud_webhook.py [--notices 1000] [--concurrency 8]
       [--orders 100] [--tick-every 1.0] [--skip-gateway] [--profile tmp/prof]
       [--profile-format raw] [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import platform
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack, nullcontext
from pathlib import Path

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from services.simulators.hub.sender import prepare_notice  # noqa: E402
from services.webhook_gateway.app import WEBHOOK_PATH  # noqa: E402
from services.webhook_gateway.signature import StandardWebhooksV1  # noqa: E402
from tests.support.ports import free_ports  # noqa: E402

ESTEIRA = [sys.executable, "-m", "services.cli"]
INSTITUTION = "SIMBANK"
FINAL_STATES = ("RESOLVED", "INDETERMINATE")
DOCUMENT = "98765432100"


def _baseline_app(secret: str) -> FastAPI:
    """A FastAPI endpoint that reads the body, verifies the HMAC and answers 200."""
    scheme = StandardWebhooksV1([secret])
    app = FastAPI()

    @app.post(WEBHOOK_PATH)
    async def receive(request: Request) -> JSONResponse:
        verdict = scheme.verify(request.headers, await request.body())
        return JSONResponse({"ok": verdict.valid}, status_code=200 if verdict.valid else 401)

    return app


class Processes(ExitStack):
    """Child processes stopped (SIGTERM, then SIGKILL) when the block ends."""

    def start(self, name: str, argv: list[str], env: dict[str, str], log_dir: Path):
        log = (log_dir / f"{name}.log").open("w")
        process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   cwd=log_dir)
        self.callback(self._stop, process, log)
        return process

    @staticmethod
    def _stop(process: subprocess.Popen, log) -> None:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _env(data_dir: Path, ports: dict[str, int], secret: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ESTEIRA_", "TEMPORAL_"))}
    env.update({"PYTHONPATH": str(REPO), "ESTEIRA_DATA_DIR": str(data_dir),
                "ESTEIRA_LOGGING__TO_FILE": "false", "ESTEIRA_LOGGING__LEVEL": "WARNING",
                "ESTEIRA_SISBAJUD__HUB_WEBHOOK_SECRETS": json.dumps([secret]), **extra})
    env.update({f"ESTEIRA_PORTS__{k.upper()}": str(v) for k, v in ports.items()})
    return env


def _migrate_store(env: dict[str, str], cwd: Path) -> None:
    """`esteira migrate`'s store half (its search-attribute half needs a Temporal up)."""
    subprocess.run([sys.executable, "-c", "import asyncio; from services.bootstrap import "
                    "bootstrap; from shared.settings import Settings; "
                    "asyncio.run(bootstrap(Settings()))"],
                   env=env, cwd=cwd, check=True, capture_output=True)


def _wait_http(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not come up")


async def _blast(url: str, secret: str, count: int, concurrency: int,
                 order_ids: list[str] | None = None) -> dict:
    """POST `count` distinct signed notices, `concurrency` at a time; latency per request."""
    notices = [prepare_notice(secret, order_ids[i] if order_ids else str(uuid.uuid4()), 1)
               for i in range(count)]
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    queue: asyncio.Queue = asyncio.Queue()
    for notice in notices:
        queue.put_nowait(notice)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30) as http:

        async def sender() -> None:
            while not queue.empty():
                notice = queue.get_nowait()
                started = time.perf_counter()
                response = await http.post(url, content=notice.body, headers=notice.headers)
                latencies.append(time.perf_counter() - started)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

        started = time.perf_counter()
        await asyncio.gather(*(sender() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    ordered = sorted(latencies)
    return {"per_s": count / elapsed, "p50_ms": statistics.median(ordered) * 1000,
            "p99_ms": ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000,
            "statuses": statuses}


def bench_gateway(args, secret: str, work: Path) -> dict:
    """The gateway (`esteira webhook`: HMAC, SQLite, order fetch) beside the HMAC-only baseline."""
    data = work / "gateway"
    data.mkdir()
    ports = dict(zip(("webhook", "api", "mensageria"), free_ports(3), strict=True))
    env = _env(data / "data", ports, secret)
    _migrate_store(env, data)
    with Processes() as procs:
        procs.start("webhook", [*ESTEIRA, "webhook"], env, data)
        procs.start("mensageria", [*ESTEIRA, "simulator", "mensageria", "--no-demo"], env, data)
        procs.start("baseline", [sys.executable, __file__, "--serve-baseline", str(ports["api"]),
                                 "--secret", secret], env, data)
        mensageria = f"http://127.0.0.1:{ports['mensageria']}"
        _wait_http(f"http://127.0.0.1:{ports['webhook']}/health")
        _wait_http(f"http://127.0.0.1:{ports['api']}/docs")
        _wait_http(f"{mensageria}/_sim/orders")
        results = {}
        for name, port in (("baseline (HMAC only)", ports["api"]),
                           ("gateway (HMAC+SQL+fetch)", ports["webhook"])):
            url = f"http://127.0.0.1:{port}{WEBHOOK_PATH}"
            # Every notice names an order the Mensageria serves: the accepted path is measured.
            warm, measured = (_seeded_orders(mensageria, n)
                              for n in (min(200, args.notices), args.notices))
            asyncio.run(_blast(url, secret, len(warm), args.concurrency, warm))
            results[name] = asyncio.run(_blast(url, secret, len(measured), args.concurrency,
                                               measured))
    return results


def _seeded_orders(mensageria: str, count: int) -> list[str]:
    """`count` fresh BLOQUEIO orders stored in the Mensageria simulator."""
    order_ids = [str(uuid.uuid4()) for _ in range(count)]
    httpx.post(f"{mensageria}/_sim/orders", timeout=30, json=[
        {"orderId": o, "revision": 1, "operation": "BLOQUEIO", "institutionId": INSTITUTION,
         "subject": {"document": DOCUMENT}, "amount": "1.00"} for o in order_ids]
    ).raise_for_status()
    return order_ids


def bench_orders(args, secret: str, work: Path) -> list[dict]:
    """Notices -> tick -> fetch -> plan -> block -> settle -> drain, on dev-default processes,
    then the baseline; one result per round."""
    data = work / "orders"
    data.mkdir()
    names = ("webhook", "midaz", "mensageria", "temporal", "temporal_ui", "api")
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    env = _env(data / "data", ports, secret)
    _migrate_store(env, data)
    from services.dev.temporal_server import dev_server_args
    from shared.settings import Settings

    settings = Settings(data_dir=data / "data", ports={**ports, "grpc": free_ports(1)[0]})
    with Processes() as procs:
        temporal = procs.start("temporal", dev_server_args(settings), env, data)
        midaz_sim = procs.start("midaz", [*ESTEIRA, "simulator", "midaz", "--no-demo"], env,
                                data)
        mensageria_sim = procs.start(
            "mensageria", [*ESTEIRA, "simulator", "mensageria", "--no-demo"], env, data)
        webhook = procs.start("webhook", [*ESTEIRA, "webhook"], env, data)
        worker = procs.start("worker", [*ESTEIRA, "worker", "--domains", "sisbajud"], env, data)
        midaz = f"http://127.0.0.1:{ports['midaz']}"
        mensageria = f"http://127.0.0.1:{ports['mensageria']}"
        for url in (midaz + "/_sim/config", mensageria + "/_sim/orders",
                    f"http://127.0.0.1:{ports['webhook']}/health"):
            _wait_http(url)
        institution = settings.sisbajud.institutions[0]
        ids = {"organizationId": institution.organization_id, "ledgerId": institution.ledger_id}
        account = httpx.post(f"{midaz}/_sim/accounts", json={
            **ids, "alias": "@bench", "available": "1000000000"}).json()["account"]
        httpx.post(f"{midaz}/_sim/crm/instruments", json={
            **ids, "document": DOCUMENT, "accountId": account["id"],
            "bankingDetails": {"branch": "0001", "account": "1", "type": "CACC"}})
        baseline_queue = f"bench-baseline-{uuid.uuid4()}"
        baseline = procs.start("baseline-worker", [
            sys.executable, str(REPO / "bench" / "sisbajud_baseline.py"), "--serve",
            settings.temporal_address, baseline_queue,
            *(["--sandboxed"] if args.baseline_sandboxed else [])], env, data)
        pipeline = {"temporal": temporal, "worker": worker, "webhook": webhook,
                    "midaz": midaz_sim, "mensageria": mensageria_sim}
        floor = {"temporal": temporal, "worker": baseline}
        rounds = []
        # Rounds alternate the pipeline and its baseline on the same processes: one pair
        # swings by a third between runs, the median of several does not.
        for number in range(args.rounds):
            order_ids = [str(uuid.uuid4()) for _ in range(args.orders)]
            httpx.post(f"{mensageria}/_sim/orders", json=[
                {"orderId": o, "revision": 1, "operation": "BLOQUEIO",
                 "institutionId": INSTITUTION, "subject": {"document": DOCUMENT},
                 "amount": "1.00"} for o in order_ids])
            profiler = Profiler(args.profile if number == 0 else None, procs, data,
                                args.profile_format, args.profile_gil)
            profiler.attach("worker", worker.pid)
            profiler.attach("webhook", webhook.pid)
            before = _cpu(pipeline)
            result = asyncio.run(_orders_end_to_end(args, secret, settings, ports, order_ids))
            result["cpu"] = _cpu(pipeline, before)
            if number == 0:  # later rounds' rows would mix with this one's
                result["timeline"] = _timeline(settings)
            profiler.stop()
            profiler.attach("baseline-worker", baseline.pid)
            before = _cpu(floor)
            result["baseline"] = asyncio.run(_baseline(args, settings, baseline_queue,
                                                       order_ids))
            result["baseline"]["cpu"] = _cpu(floor, before)
            profiler.stop()
            if not args.no_visible_baseline:
                before = _cpu(floor)
                result["visible"] = asyncio.run(_baseline(args, settings, baseline_queue,
                                                          order_ids, visible=True))
                result["visible"]["cpu"] = _cpu(floor, before)
            rounds.append(result)
        return rounds


# (stage, table, column) read back from the store: when each stage saw the first and the
# last order, so a stage that holds the others up shows as a long span.
TIMELINE = (("notice recorded", "sisbajud_notices", "received_at"),
            ("notice handed to its order", "sisbajud_notices", "ingested_at"),
            ("order begun", "sisbajud_orders", "created_at"),
            ("ledger write registered", "sisbajud_writes", "created_at"),
            ("result queued", "sisbajud_outbox", "created_at"),
            ("result sent", "sisbajud_outbox", "sent_at"))


def _timeline(settings) -> list[tuple[str, float, float]]:
    """(stage, first, last) in seconds after the first notice was recorded."""
    import sqlite3
    from datetime import datetime

    path = settings.sqlalchemy_url.split("///", 1)[1]
    with sqlite3.connect(path) as db:
        spans = [(name, *db.execute(f"SELECT min({column}), max({column}) FROM {table}")
                  .fetchone()) for name, table, column in TIMELINE]
    origin = datetime.fromisoformat(spans[0][1])
    return [(name, (datetime.fromisoformat(first) - origin).total_seconds(),
             (datetime.fromisoformat(last) - origin).total_seconds())
            for name, first, last in spans if first and last]


def _cpu(processes: dict[str, subprocess.Popen],
         since: dict[str, float] | None = None) -> dict[str, float]:
    """CPU seconds (user + system) of each process and its children, minus `since`."""
    tick = os.sysconf("SC_CLK_TCK")

    def seconds(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total = sum(int(f) for f in fields[11:13]) / tick
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            total += seconds(int(child))
        return total

    now = {name: seconds(p.pid) for name, p in processes.items()}
    return {name: value - (since or {}).get(name, 0.0) for name, value in now.items()}


# py-spy's `--format` and the suffix of the file it writes.
SUFFIX = {"flamegraph": "svg", "raw": "txt", "speedscope": "json"}


class Profiler:
    """py-spy profiles of child processes while a phase runs (`--profile DIR`)."""

    def __init__(self, out: Path | None, procs: Processes, log_dir: Path,
                 fmt: str = "flamegraph", gil: bool = False) -> None:
        self._out, self._procs, self._log_dir, self._fmt = out, procs, log_dir, fmt
        self._gil = gil
        self._running: list[subprocess.Popen] = []

    def attach(self, name: str, pid: int) -> None:
        """Sample `pid` until `stop` (a no-op without `--profile`)."""
        if self._out is None:
            return
        self._out.mkdir(parents=True, exist_ok=True)
        self._running.append(subprocess.Popen(
            [str(Path(sys.executable).with_name("py-spy")), "record", "--pid", str(pid),
             "--rate", "50", "--nonblocking", "--format", self._fmt,
             *(["--gil"] if self._gil else []),
             "--output", str(self._out / f"{name}.{SUFFIX[self._fmt]}")],
            stdout=subprocess.DEVNULL, stderr=(self._log_dir / f"py-spy-{name}.log").open("w")))

    def stop(self) -> None:
        """SIGINT: py-spy writes its flame graph and exits."""
        for process in self._running:
            process.send_signal(signal.SIGINT)
        for process in self._running:
            process.wait(60)
        self._running.clear()


async def _baseline(args, settings, task_queue: str, order_ids: list[str],
                    visible: bool = False) -> dict:
    """The no-op workflow shaped like the first order's history, as many, on this server
    (`visible`: with the order's patch markers, search attributes and memo too)."""
    from activities.sisbajud.contracts.orders import order_workflow_id
    from bench.sisbajud_baseline import run_baseline, shape_of
    from shared.temporal import connect

    client = await connect(settings)
    shape = await shape_of(client, order_workflow_id(order_ids[0]))
    result = await run_baseline(client, task_queue, shape, len(order_ids), args.concurrency,
                                visible=visible)
    return {**result, "steps": shape.steps, "signals": shape.signals, "events": shape.other}


async def _orders_end_to_end(args, secret, settings, ports, order_ids) -> dict:
    from temporalio.client import ScheduleOverlapPolicy

    from activities.sisbajud.contracts.orders import tick_schedule_id
    from shared.temporal import connect

    client = None
    for _ in range(100):
        try:
            client = await connect(settings)
            await client.get_schedule_handle(tick_schedule_id()).describe()
            break
        except Exception:
            await asyncio.sleep(0.3)
    assert client is not None, "the worker never created the tick schedule"
    schedule = client.get_schedule_handle(tick_schedule_id())
    url = f"http://127.0.0.1:{ports['webhook']}{WEBHOOK_PATH}"
    started = time.perf_counter()
    sent = await _blast(url, secret, len(order_ids), args.concurrency, order_ids)
    blasted = time.perf_counter() - started
    progress: dict[str, float] = {}
    mine, wanted, seen = [], set(order_ids), 0
    settled: set[str] = set()
    results_url = f"http://127.0.0.1:{ports['mensageria']}/_sim/results"
    async with httpx.AsyncClient(timeout=10) as http:
        while len(settled) < len(order_ids) and time.perf_counter() - started < args.max_wait:
            # Ticks every second instead of the default 30 s: the pipeline, not the wait.
            await schedule.trigger(overlap=ScheduleOverlapPolicy.SKIP)
            await asyncio.sleep(args.tick_every)
            # Only what came since the last poll: every result and attempt of every round, each
            # second, is work for the simulator (and this process) on the measured cores.
            body = (await http.get(results_url, params={"since": seen,
                                                        "attempts": "false"})).json()
            seen += len(body["results"])
            # Progress states (ACCEPTED, EXECUTING, …) are results too: count settled orders
            # (of this round: the simulator keeps the earlier rounds' results).
            new = [r for r in body["results"] if r["orderId"] in wanted]
            mine += new
            settled |= {r["orderId"] for r in new
                        if r["body"].get("executionState") in FINAL_STATES}
            for share in (0.1, 0.5, 0.9, 1.0):
                if len(settled) >= share * len(order_ids):
                    progress.setdefault(f"{share:.0%}", round(time.perf_counter() - started, 1))
    elapsed = time.perf_counter() - started
    return {"orders": len(order_ids), "delivered": len(settled), "seconds": elapsed,
            "per_s": len(settled) / elapsed, "notices": sent["statuses"],
            "results": len(mine), "blast_s": blasted, "progress_s": progress}


# Processes standing for systems we don't own: in production they run on other machines.
SIMULATORS = ("midaz", "mensageria")


def _ratios(row: dict) -> dict[str, float]:
    """orders/s over the baseline's, and CPU per order: the baseline's over the orders' (Temporal
    + worker), and the bound (the baseline plus the simulators) over every process's."""
    base = row["baseline"]
    floor = sum(base["cpu"].values()) / base["orders"]
    cpu = {k: v / row["orders"] for k, v in row["cpu"].items()}
    ratios = {"rate": row["per_s"] / base["per_s"],
              "cpu": floor / sum(cpu[k] for k in base["cpu"]),
              "bound": (floor + sum(cpu[k] for k in SIMULATORS)) / sum(cpu.values())}
    if "visible" in row:
        ratios["visible"] = row["per_s"] / row["visible"]["per_s"]
    return ratios


def _print_rounds(rounds: list[dict]) -> None:
    """Each round's rates, CPU per order and ratios, then the medians."""
    for number, row in enumerate(rounds, 1):
        base, ratios = row["baseline"], _ratios(row)
        per_order = {k: round(1000 * v / row["orders"]) for k, v in row["cpu"].items()}
        floor = {k: round(1000 * v / base["orders"]) for k, v in base["cpu"].items()}
        print(f"round {number}: {row['per_s']:.1f} orders/s, baseline {base['per_s']:.1f}/s, "
              f"ratio {ratios['rate']:.2f}; CPU ms per order {per_order}, baseline {floor}; "
              f"CPU baseline / orders (Temporal + worker) {ratios['cpu']:.2f}, "
              f"bound / all {ratios['bound']:.2f}")
        if "visible" in row:
            seen = row["visible"]
            floor = {k: round(1000 * v / seen["orders"]) for k, v in seen["cpu"].items()}
            print(f"  visible baseline {seen['per_s']:.1f}/s, ratio {ratios['visible']:.2f}; "
                  f"CPU ms per order {floor}")
    names = [k for k in ("rate", "cpu", "bound", "visible") if k in _ratios(rounds[0])]
    medians = {k: statistics.median(_ratios(row)[k] for row in rounds) for k in names}
    print(f"median of {len(rounds)} rounds: orders/s / baseline = {medians['rate']:.2f} "
          f"(target >= 0.6); CPU baseline / orders (Temporal + worker) = {medians['cpu']:.2f}; "
          f"CPU (baseline + simulators) / every process = {medians['bound']:.2f}"
          + (f"; orders/s / visible baseline = {medians['visible']:.2f}"
             if "visible" in medians else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notices", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--orders", type=int, default=100)
    parser.add_argument("--max-wait", type=float, default=120.0)
    parser.add_argument("--rounds", type=int, default=1,
                        help="alternate the orders and their baseline this many times")
    parser.add_argument("--tick-every", type=float, default=1.0,
                        help="seconds between tick triggers while orders run")
    parser.add_argument("--profile", type=Path,
                        help="write py-spy flame graphs of the worker, the gateway and the "
                             "baseline's worker here (needs py-spy in the venv)")
    parser.add_argument("--profile-format", choices=sorted(SUFFIX), default="flamegraph",
                        help="py-spy's output: flame graphs, or raw collapsed stacks to sum")
    # A thread waiting for the GIL looks busy to py-spy; with --gil only the holder is sampled.
    parser.add_argument("--profile-gil", action="store_true",
                        help="sample only the thread holding the GIL (Python's own CPU)")
    parser.add_argument("--baseline-sandboxed", action="store_true",
                        help="run the baseline's workflows in the sandbox (the sisbajud "
                             "worker runs them unsandboxed)")
    parser.add_argument("--no-visible-baseline", action="store_true",
                        help="skip the second baseline, which adds the order's patch markers, "
                             "search attributes and memo to the no-op workflow")
    parser.add_argument("--skip-gateway", action="store_true",
                        help="only the orders end to end and their baseline")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path,
                        help="run in this new directory and keep it (logs, store) afterwards")
    parser.add_argument("--serve-baseline", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--secret", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if args.serve_baseline:
        import uvicorn

        uvicorn.run(_baseline_app(args.secret), host="127.0.0.1", port=args.serve_baseline,
                    log_level="warning")
        return
    secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
    if args.keep:
        args.keep.mkdir(parents=True)
    with (nullcontext(str(args.keep)) if args.keep
          else tempfile.TemporaryDirectory(prefix="esteira-bench-")) as tmp:
        gateway = {} if args.skip_gateway else bench_gateway(args, secret, Path(tmp))
        rounds = bench_orders(args, secret, Path(tmp))
    load = os.getloadavg()
    print(f"python {platform.python_version()}, {os.cpu_count()} cpu, load {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f}, {args.notices} notices at concurrency "
          f"{args.concurrency}")
    print(f"{'endpoint':<26}{'notices/s':>10}{'p50 ms':>9}{'p99 ms':>9}  statuses")
    for name, row in gateway.items():
        print(f"{name:<26}{row['per_s']:>10.0f}{row['p50_ms']:>9.1f}{row['p99_ms']:>9.1f}  "
              f"{row['statuses']}")
    orders = rounds[0]
    print(f"orders end to end: {orders['delivered']}/{orders['orders']} results in "
          f"{orders['seconds']:.1f}s = {orders['per_s']:.1f} orders/s "
          f"(notice -> tick -> fetch -> block -> outbox -> Mensageria; "
          f"{orders['results']} results)")
    print(f"notices sent in {orders['blast_s']:.1f}s; settled orders by time: "
          f"{orders['progress_s']}")
    for name, first, last in orders["timeline"]:
        print(f"  {name:<28} from {first:6.1f}s to {last:6.1f}s")
    base = orders["baseline"]
    print(f"baseline: {base['orders']} no-op workflows in {base['seconds']:.1f}s = "
          f"{base['per_s']:.1f}/s ({base['steps'].count('a')} activities, "
          f"{base['steps'].count('l')} local activities, {base['signals']} signal each)")
    print(f"one order's history: {base['events']}")
    if "visible" in orders:
        print("visible baseline: the same, started with the order's OrderId search attribute, "
              "with its patch markers, search-attribute upserts and memo updates")
    _print_rounds(rounds)
    if args.json:
        args.json.write_text(json.dumps({"gateway": gateway, "orders": rounds}, indent=2))


if __name__ == "__main__":
    main()
