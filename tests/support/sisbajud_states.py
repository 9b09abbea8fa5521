"""What the Mensageria simulator received, split into progress states and numbered results."""

from __future__ import annotations

from typing import Any


def numbered(key: str) -> bool:
    """Final results and heartbeats end in a number (`…:1`); progress states in a word."""
    return key.rsplit(":", 1)[-1].isdigit()


def final_keys(results: dict[str, Any]) -> list[str]:
    """The keys of final results and heartbeats received, sorted (progress states left out)."""
    return [k for k in results["keys"] if numbered(k)]


def finals(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Final results and heartbeats, first delivery of each key, in the order they arrived."""
    return [r for r in results["results"] if numbered(r["idempotencyKey"])]


def states(results: dict[str, Any]) -> list[tuple[str, str]]:
    """`(key suffix, executionState)` of every result, in the order they arrived."""
    return [(r["idempotencyKey"].rsplit(":", 1)[-1], r["body"]["executionState"])
            for r in results["results"]]
