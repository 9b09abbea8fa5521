"""What a no-op workflow costs `esteira dev`'s processes by the pace it arrives at.

N one-activity no-op workflows started at once (the baseline, the signer bench's (b)), then
at fixed rates a second, on the same processes. The Temporal server's CPU per workflow grows
as arrivals slow: its history queues are read up to 20 times a second each while work flows,
and at a slower pace each read finds fewer tasks. A pipeline paced by its own work (signing
on the same cores) pays that before any of our code does.

`--dynamic-config KEY=VALUE` (repeatable) runs the same rounds on a second `esteira dev` with
those values in `TemporalServer:DynamicConfig`, printed beside the defaults: e.g.
`history.transferProcessorMaxPollRPS=5` with the timer and visibility ones.

Usage: .venv/bin/python bench/temporal_pace.py [--n 300] [--rates 50,25,12] [--rounds 2]
       [--dynamic-config KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.esteira_tree import EsteiraDev, esteira_dev, noop_workflows, tree_cpu  # noqa: E402

AT_ONCE = "at once"


def _pace(dev: EsteiraDev, n: int, rate: float | None) -> dict[str, float]:
    """One batch of no-op workflows: rate, latencies and CPU ms per workflow per process."""
    before = tree_cpu(dev.pid)
    figures = asyncio.run(noop_workflows(dev.temporal_address, n, rate=rate))
    after = tree_cpu(dev.pid)
    spent = {role: (after[role] - before.get(role, 0.0)) * 1000 / n for role in after}
    return {"wf/s": figures["docs_per_s"], "p50 ms": figures["p50_ms"],
            "p99 ms": figures["p99_ms"], "server": spent.get("temporal server", 0.0),
            "worker": spent.get("worker", 0.0), "all": sum(spent.values())}


def _run(config: dict[str, object], args) -> dict[str, dict[str, float]]:
    """Every pace, `args.rounds` times, on one `esteira dev`; the median of each figure."""
    extra = {"ESTEIRA_TEMPORAL_SERVER__DYNAMIC_CONFIG": json.dumps(config)} if config else {}
    paces: list[tuple[str, float | None]] = [(AT_ONCE, None)] + [
        (f"{rate:g}/s", rate) for rate in args.rates]
    seen: dict[str, list[dict[str, float]]] = {name: [] for name, _ in paces}
    with esteira_dev(extra, prefix="esteira-pace-") as dev:
        for _ in range(args.rounds):
            for name, rate in paces:
                seen[name].append(_pace(dev, args.n, rate))
    return {name: {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
            for name, rounds in seen.items()}


def _dynamic_config(pairs: list[str]) -> dict[str, object]:
    """`KEY=VALUE` pairs, each value read as JSON when it is JSON (5, true), else a string."""
    config: dict[str, object] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        try:
            config[key] = json.loads(value)
        except json.JSONDecodeError:
            config[key] = value
    return config


def _report(label: str, medians: dict[str, dict[str, float]]) -> list[str]:
    """One table: each pace's rate, latencies, CPU ms per workflow, server beside at once."""
    base = medians[AT_ONCE]["server"]
    lines = [label, f"  {'pace':<8} {'wf/s':>6} {'p50 ms':>7} {'p99 ms':>7} {'server':>7} "
                    f"{'worker':>7} {'all':>7}  server / at once  (CPU ms per workflow)"]
    for name, m in medians.items():
        lines.append(f"  {name:<8} {m['wf/s']:>6.1f} {m['p50 ms']:>7.0f} {m['p99 ms']:>7.0f} "
                     f"{m['server']:>7.1f} {m['worker']:>7.1f} {m['all']:>7.1f}  "
                     f"{m['server'] / base:>15.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=300, help="workflows per pace and round")
    parser.add_argument("--rates", type=lambda text: [float(x) for x in text.split(",")],
                        default=[50.0, 25.0, 12.0], help="arrivals a second, comma-separated")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dynamic-config", action="append", default=[], metavar="KEY=VALUE",
                        help="a second run with this TemporalServer:DynamicConfig value")
    args = parser.parse_args()
    print(f"{args.n} no-op workflows per pace, {args.rounds} round(s), medians")
    for line in _report("esteira dev defaults", _run({}, args)):
        print(line)
    if args.dynamic_config:
        config = _dynamic_config(args.dynamic_config)
        for line in _report(f"with {json.dumps(config)}", _run(config, args)):
            print(line)


if __name__ == "__main__":
    main()
