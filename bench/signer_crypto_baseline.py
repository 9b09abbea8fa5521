"""Baseline (a): PAdES signing and verification in one process, stock pyHanko vs our fast path.

The last column runs the fast path's coroutines under `asyncio.run`, one loop per call, as
`run_sync` did before it kept a loop per thread (its rows alternate with the fast path's).

Usage: .venv/bin/python bench/signer_crypto_baseline.py --n 100 [--json out.json]
"""

import argparse
import asyncio
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from io import BytesIO
from pathlib import Path

from cryptography import x509
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.sign import fields, signers

from activities.signer.crypto import pades, samples
from activities.signer.crypto.certs import write_dev_bundle
from activities.signer.crypto.signer import load_pfx_signer
from activities.signer.crypto.verify import async_verify_pades, verify_pades

PASSWORD = "bench"


def _measure(docs: list[bytes], fn: Callable[[bytes], object]) -> dict:
    fn(docs[0])  # warm-up: imports, first-call caches
    times = []
    for doc in docs:
        start = time.perf_counter()
        fn(doc)
        times.append(time.perf_counter() - start)
    return _figures(times)


def _figures(times: list[float]) -> dict:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {
        "docs_per_s": len(times) / sum(times),
        "p50_ms": statistics.median(times) * 1000,
        "p99_ms": p99 * 1000,
        "min_ms": ordered[0] * 1000,
    }


def _alternating(docs: list[bytes], first: Callable[[bytes], object],
                 second: Callable[[bytes], object]) -> tuple[dict, dict]:
    """`_measure` of two variants, document by document in turn: drift hits both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    first(docs[0])  # warm-up, as _measure does
    second(docs[0])
    for number, doc in enumerate(docs):
        order = (0, 1) if number % 2 == 0 else (1, 0)
        for index in order:
            start = time.perf_counter()
            (first, second)[index](doc)
            times[index].append(time.perf_counter() - start)
    return _figures(times[0]), _figures(times[1])


def _stock_sign(pfx: bytes) -> Callable[[bytes], bytes]:
    """pyHanko as documented: open the PFX per document, let it estimate the size."""

    def sign(pdf: bytes) -> bytes:
        signer = signers.SimpleSigner.load_pkcs12_data(
            pfx, other_certs=[], passphrase=PASSWORD.encode()
        )
        meta = signers.PdfSignatureMetadata(
            field_name="Signature1", md_algorithm="sha256", subfilter=fields.SigSeedSubFilter.PADES
        )
        out = BytesIO()
        signers.sign_pdf(IncrementalPdfFileWriter(BytesIO(pdf)), meta, signer=signer, output=out)
        return out.getvalue()

    return sign


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100, help="documents per variant")
    parser.add_argument("--size", type=int, default=100_000, help="approximate PDF size in bytes")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        bundle = write_dev_bundle(Path(tmp), PASSWORD)
        pfx = bundle.pfx.read_bytes()
        ca = x509.load_pem_x509_certificate(bundle.ca_pem.read_bytes())

    docs = [samples.make_pdf(args.size + i) for i in range(args.n)]
    loaded = load_pfx_signer(pfx, PASSWORD)  # once, as a worker does at boot
    reserve = pades.bytes_reserved_for(loaded)

    def fast(pdf: bytes) -> bytes:
        return pades.sign_pades(pdf, loaded, bytes_reserved=reserve)

    def fast_sign_verify(pdf: bytes) -> None:
        result = verify_pades(fast(pdf), trust_roots=[ca])
        assert result.ok, result.reason

    def loop_per_call(pdf: bytes) -> None:
        signed = asyncio.run(pades.async_sign_pades(pdf, loaded, bytes_reserved=reserve))
        result = asyncio.run(async_verify_pades(signed, trust_roots=[ca]))
        assert result.ok, result.reason

    signed = [fast(doc) for doc in docs]
    variants = {
        "stock pyHanko sign": _measure(docs, _stock_sign(pfx)),
        "fast sign": _measure(docs, fast),
        "verify only": _measure(signed, lambda pdf: verify_pades(pdf, trust_roots=[ca])),
    }
    kept, per_call = _alternating(docs, fast_sign_verify, loop_per_call)
    variants["fast sign+verify"] = kept
    variants["asyncio.run per call"] = per_call

    print(
        f"PAdES B-B, RSA-2048, {args.n} × ~{len(docs[0]) // 1000} kB PDFs, one process, "
        f"pyHanko {version('pyhanko')}, Python {platform.python_version()}"
    )
    print(f"{'':12}" + "".join(f"{name:>22}" for name in variants))
    for key, label in [("docs_per_s", "docs/s"), ("p50_ms", "p50 ms"), ("p99_ms", "p99 ms")]:
        print(f"{label:12}" + "".join(f"{v[key]:>22.1f}" for v in variants.values()))
    speedup = variants["fast sign"]["docs_per_s"] / variants["stock pyHanko sign"]["docs_per_s"]
    saved = per_call["p50_ms"] - kept["p50_ms"]
    print(f"fast sign is {speedup:.1f}× stock; sign+verify on a kept loop saves {saved:.2f} ms "
          f"per document (p50) against a loop per call")
    if args.json:
        args.json.write_text(json.dumps({"n": args.n, "variants": variants}, indent=2))


if __name__ == "__main__":
    main()
