"""What a signature level costs through the pipeline: B-B, B-T and B-LT in one run.

`esteira dev` with three profiles (one input folder each) signing with the same certificate,
a real TSA, OCSP responder and CRL on loopback (certomancer, as the tests use). N PDFs of
~100 KB are dropped into each folder in turn, B-B first; for each level it prints docs/s
(drop -> Completed), p50/p99 latency, the CPU per document of the `esteira dev` tree and of
the responders, and each figure's ratio to B-B measured in the same run.

Usage: .venv/bin/python bench/signer_levels.py [--n 100] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import create_engine, text

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from activities.signer.crypto import samples  # noqa: E402
from bench.esteira_tree import esteira_dev, percentiles, tree_cpu  # noqa: E402
from bench.signer_pipeline import _epoch  # noqa: E402
from tests.support.ltv_pki import PFX_PASSWORD, running_pki  # noqa: E402

LEVELS = ("B-B", "B-T", "B-LT")


def _profiles(pki, password_file: Path) -> list[dict]:
    return [{"name": level.lower(), "format": "pades", "pfx_path": str(pki.signer_pfx),
             "pfx_password_file": str(password_file), "trust_roots": [str(pki.root_pem)],
             "signature_level": level, "input_folder": level.lower(),
             **({"timestamp": {"urls": [pki.tsa_url()]}} if level != "B-B" else {})}
            for level in LEVELS]


def _run_level(data: Path, level: str, docs: list[bytes]) -> dict:
    """Drop the documents into the level's folder; wait until all are Completed."""
    inbox = data / "storage" / "input" / level.lower()
    engine = create_engine(f"sqlite:///{data / 'db' / 'esteira.db'}")
    prefix = f"bench-{level.lower()}-"
    dropped: dict[str, float] = {}
    start = time.time()
    for i, doc in enumerate(docs):
        name = f"{prefix}{i:05d}.pdf"
        temporary = inbox / f".{name}.tmp"  # ignored by the watcher until renamed
        temporary.write_bytes(doc)
        temporary.rename(inbox / name)
        dropped[name] = time.time()
    done: dict[str, float] = {}
    while len(done) < len(docs):
        with engine.connect() as connection:
            rows = connection.execute(text(
                "SELECT file_name, status, completed_at, error_message FROM jobs "
                "WHERE status IN ('Completed', 'Failed') AND file_name LIKE :names"),
                {"names": f"{prefix}%"}).all()
        failed = [r for r in rows if r.status == "Failed"]
        if failed:
            raise SystemExit(f"{level}: {len(failed)} job(s) failed: {failed[0].error_message}")
        done.update({r.file_name: _epoch(r.completed_at) for r in rows})
        time.sleep(0.2)
    latencies = [done[name] - dropped[name] for name in dropped]
    p50, p99 = percentiles(latencies)
    return {"docs_per_s": len(docs) / (max(done.values()) - start), "p50_ms": p50 * 1000,
            "p99_ms": p99 * 1000}


def _cpu_ms(before: dict[str, float], after: dict[str, float], n: int) -> float:
    return sum(after.get(k, 0.0) - before.get(k, 0.0) for k in after) * 1000 / n


def _responder_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="esteira-levels-pki-") as folder, \
            running_pki(Path(folder)) as pki:
        password = Path(folder) / "pfx.password"
        password.write_text(PFX_PASSWORD)
        env = {"ESTEIRA_SIGNING__PROFILES": json.dumps(_profiles(pki, password)),
               "ESTEIRA_SIGNING__DEFAULT_PROFILE": "b-b",
               "ESTEIRA_STORAGE__INPUTS": json.dumps([{"name": lv.lower()} for lv in LEVELS])}
        with esteira_dev(env, keep=args.keep, prefix="esteira-levels-") as dev:
            docs = [samples.make_pdf(100_000) for _ in range(args.n)]
            print(f"{args.n} PDFs of ~{len(docs[0]) // 1024} KB per level, {os.cpu_count()} "
                  f"cores, esteira dev defaults (MaxConcurrency 4, SQLite); TSA, OCSP and CRL "
                  f"on loopback (certomancer)")
            results = {}
            for level in LEVELS:
                before, responders = tree_cpu(dev.pid), _responder_cpu(pki.process.pid)
                figures = _run_level(dev.workdir / "data", level, docs)
                figures["cpu_ms"] = _cpu_ms(before, tree_cpu(dev.pid), args.n)
                figures["responder_ms"] = ((_responder_cpu(pki.process.pid) - responders)
                                           * 1000 / args.n)
                results[level] = figures
    base = results["B-B"]
    print(f"{'level':<6} {'docs/s':>7} {'x B-B':>6} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'CPU ms/doc':>10} {'x B-B':>6} {'TSA+OCSP CPU ms/doc':>20}")
    for level, f in results.items():
        print(f"{level:<6} {f['docs_per_s']:>7.1f} {f['docs_per_s'] / base['docs_per_s']:>6.2f} "
              f"{f['p50_ms']:>7.0f} {f['p99_ms']:>7.0f} {f['cpu_ms']:>10.1f} "
              f"{f['cpu_ms'] / base['cpu_ms']:>6.2f} {f['responder_ms']:>20.1f}")


if __name__ == "__main__":
    main()
