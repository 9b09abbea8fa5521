"""The repository keeps the domain shape: services use domain faces, shared/ is domain-free,
simulators import only contracts, domains stay apart, and no import cycle exists."""

from __future__ import annotations

from pathlib import Path

from tests.architecture.imports import read_graph
from tests.architecture.rules import check

REPO = Path(__file__).resolve().parents[2]


def test_the_repository_keeps_the_domain_shape():
    violations = check(read_graph(REPO))
    listing = "\n".join(f"  ({v.rule}) {v.text}" for v in violations)
    assert not violations, f"{len(violations)} import(s) break the domain shape:\n{listing}"


def test_the_graph_sees_the_worker_reach_each_domain_through_its_face():
    graph = read_graph(REPO)
    worker = {i.target for i in graph.imports if i.source == "services.worker.domains"}
    assert {f"activities.{d}.worker" for d in ("ops", "signer", "pickup", "sisbajud")} <= worker
