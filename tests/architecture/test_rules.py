"""Each import rule fails on a small tree that breaks it, and passes on one that doesn't."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.architecture.imports import read_graph
from tests.architecture.rules import (
    check,
    domains_never_import_services,
    domains_stay_apart,
    doors_stay_apart,
    no_cycles,
    services_use_domain_faces,
    shared_is_domain_free,
    simulators_import_only_contracts,
)

# A tree with one domain in the target shape; each test adds the file that breaks a rule.
SHAPED = {
    "activities/__init__.py": "",
    "activities/signer/__init__.py": "",
    "activities/signer/pipeline.py": "from activities.signer.contracts.jobs import X\n",
    "activities/signer/operator/__init__.py": "from activities.signer.pipeline import run\n",
    "activities/signer/operator/jobs.py": "from . import __name__\n",
    "activities/signer/worker.py": (
        "from activities.signer import pipeline\nfrom workflows.signer.job import Job\n"),
    "activities/pickup/__init__.py": "",
    "activities/pickup/board.py": "",
    "workflows/__init__.py": "",
    "workflows/signer/__init__.py": "",
    "workflows/signer/job.py": (
        "from temporalio import workflow\n"
        "with workflow.unsafe.imports_passed_through():\n"
        "    from activities.signer.pipeline import run\n"),
    "shared/__init__.py": "",
    "shared/contracts/__init__.py": "",
    "activities/signer/contracts/jobs.py": "X = 1\n",
    "services/__init__.py": "",
    "services/api/__init__.py": "",
    "services/api/jobs.py": (
        "from activities.signer.operator import SignerOperations\n"
        "from activities.signer import operator\n"),
    "services/worker/__init__.py": "",
    "services/dashboard/__init__.py": "",
    "services/webhook_gateway/__init__.py": "",
    "services/worker/domains.py": (
        "async def signer(deps):\n    from activities.signer.worker import build\n"),
    "services/simulators/__init__.py": "",
    "services/simulators/lacuna/__init__.py": "",
    "services/simulators/lacuna/app.py": (
        "from activities.signer.contracts.jobs import X\nfrom services.simulators import lacuna\n"
        "import httpx\n"),
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def _texts(violations) -> list[str]:
    return [v.text for v in violations]


def test_a_tree_in_the_shape_passes_every_rule(tmp_path):
    assert check(read_graph(_tree(tmp_path, SHAPED))) == []


@pytest.mark.parametrize(("source", "text"), [
    ("services/api/board.py", "from activities.pickup.board import mark_ready\n"),
    ("services/api/board.py", "from activities.pickup import board\n"),
    ("services/api/board.py", "def f():\n    import activities.signer.pipeline\n"),
    ("services/api/board.py", "from activities import signer\n"),
    ("services/worker/main.py", "from workflows.signer.job import Job\n"),
    ("services/api/board.py", "import importlib\nimportlib.import_module('workflows.signer')\n"),
    ("services/worker/gate.py", "from activities.signer.operator.metrics import GAUGE\n"),
    ("services/api/board.py", "from activities.signer.operator.jobs import list_jobs\n"),
    ("services/dashboard/jobs.py", "from activities.signer.operator import jobs\n"),
])
def test_a_service_reaching_past_a_domain_face_fails(tmp_path, source, text):
    graph = read_graph(_tree(tmp_path, {**SHAPED, source: text}))
    [found] = services_use_domain_faces(graph)
    assert found.rule == "a" and found.text.startswith(f"{source}:")


def test_a_simulator_follows_its_own_rule_not_the_services_one(tmp_path):
    simulator = {"services/simulators/lacuna/app.py": "from activities.signer import engine\n"}
    graph = read_graph(_tree(tmp_path, {**SHAPED, **simulator}))
    assert services_use_domain_faces(graph) == []
    assert _texts(simulators_import_only_contracts(graph)) == [
        "services/simulators/lacuna/app.py:1: services.simulators.lacuna.app imports "
        "activities.signer (simulators import only contracts and simulators)"]


@pytest.mark.parametrize("target", ["activities.signer.pipeline", "workflows.signer.job",
                                    "services.api.jobs"])
def test_shared_importing_a_domain_or_a_service_fails(tmp_path, target):
    extra = {"shared/metrics_signer.py": f"def f():\n    import {target}\n"}
    [found] = shared_is_domain_free(read_graph(_tree(tmp_path, {**SHAPED, **extra})))
    assert found.rule == "b" and found.text.endswith(f"imports {target} (shared/ is domain-free)")


@pytest.mark.parametrize("text", ["from shared import settings\n",
                                  "from services.api import jobs\n",
                                  "from activities.signer.pipeline import run\n",
                                  "from activities.signer.contracts.jobs import X\n"])
def test_a_simulator_importing_more_than_contracts_fails(tmp_path, text):
    extra = {"services/simulators/lacuna/signing.py": text}
    found = simulators_import_only_contracts(read_graph(_tree(tmp_path, {**SHAPED, **extra})))
    allowed = text.startswith(("from shared.contracts", "from activities.signer.contracts"))
    assert [v.rule for v in found] == ([] if allowed else ["c"])


def test_a_cycle_through_a_function_level_import_fails_and_names_each_step(tmp_path):
    extra = {"activities/signer/lacuna.py": (
        "def sign():\n    from activities.signer.pipeline import fail\n"),
        "activities/signer/pipeline.py": "from .lacuna import sign\n"}
    [found] = no_cycles(read_graph(_tree(tmp_path, {**SHAPED, **extra})))
    assert found.text == (
        "cycle: activities.signer.lacuna -> activities.signer.pipeline "
        "(activities/signer/lacuna.py:2); activities.signer.pipeline -> "
        "activities.signer.lacuna (activities/signer/pipeline.py:1)")


def test_a_cycle_through_a_package_init_is_found(tmp_path):
    extra = {"services/worker/signer.py": "from services.worker import domains\n",
             "services/worker/domains.py": "from . import signer\n"}
    [found] = no_cycles(read_graph(_tree(tmp_path, {**SHAPED, **extra})))
    assert "services.worker.domains -> services.worker.signer" in found.text


def test_every_cycle_of_a_tangle_is_printed(tmp_path):
    # The worker's shape before issue 15: the registry imports each builder, each imports it.
    extra = {"services/worker/domains.py": (
        "from dataclasses import dataclass\n"
        "async def signer(deps):\n    from services.worker.signer import build\n"
        "async def pickup(deps):\n    from services.worker.pickup import build\n"),
        "services/worker/signer.py": "from services.worker.domains import DomainWorker\n",
        "services/worker/pickup.py": "from services.worker.domains import DomainWorker\n"}
    found = no_cycles(read_graph(_tree(tmp_path, {**SHAPED, **extra})))
    assert sorted(_texts(found)) == [
        "cycle: services.worker.domains -> services.worker.pickup (services/worker/domains.py:5);"
        " services.worker.pickup -> services.worker.domains (services/worker/pickup.py:1)",
        "cycle: services.worker.domains -> services.worker.signer (services/worker/domains.py:3);"
        " services.worker.signer -> services.worker.domains (services/worker/signer.py:1)"]


def test_a_type_checking_import_still_closes_a_cycle(tmp_path):
    # A cycle hidden behind TYPE_CHECKING is still two modules that can't be read apart.
    extra = {"activities/signer/lacuna.py": (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from activities.signer.pipeline import Pipeline\n"),
        "activities/signer/pipeline.py": "from activities.signer.lacuna import sign\n"}
    [found] = no_cycles(read_graph(_tree(tmp_path, {**SHAPED, **extra})))
    assert found.text.startswith("cycle: activities.signer.lacuna -> activities.signer.pipeline")


@pytest.mark.parametrize(("source", "text"), [
    ("activities/signer/board.py", "from activities.pickup.board import mark_ready\n"),
    ("activities/pickup/sweeps.py", "def f():\n    from workflows.signer.job import Job\n"),
    ("workflows/signer/remote.py", "from activities.pickup import board\n"),
    ("workflows/visibility.py", "from activities.signer.pipeline import run\n"),
])
def test_a_domain_reaching_into_another_fails(tmp_path, source, text):
    [found] = domains_stay_apart(read_graph(_tree(tmp_path, {**SHAPED, source: text})))
    assert found.rule == "e" and found.text.startswith(f"{source}:")


def test_domain_code_importing_a_door_fails(tmp_path):
    extra = {"activities/signer/operator/errors.py": "from services.api.jobs import x\n"}
    [found] = domains_never_import_services(read_graph(_tree(tmp_path, {**SHAPED, **extra})))
    assert found.rule == "f"


def test_relative_imports_resolve_from_modules_and_packages(tmp_path):
    extra = {"activities/signer/operator/__init__.py": (
        "from . import jobs\nfrom ..pipeline import run\n"),
        "activities/signer/operator/upload.py": (
            "from .jobs import list_jobs\nfrom .. import worker\n")}
    graph = read_graph(_tree(tmp_path, {**SHAPED, **extra}))
    targets = {(i.source, i.target) for i in graph.imports}
    assert {("activities.signer.operator", "activities.signer.operator.jobs"),
            ("activities.signer.operator", "activities.signer.pipeline"),
            ("activities.signer.operator.upload", "activities.signer.operator.jobs"),
            ("activities.signer.operator.upload", "activities.signer.worker")} <= targets


@pytest.mark.parametrize(("source", "text", "broken"), [
    ("services/dashboard/jobs.py", "from services.api.jobs import list_jobs\n", True),
    ("services/webhook_gateway/app.py", "def f():\n    from services.api import jobs\n", True),
    ("services/api/app.py", "from services.dashboard import install\n", True),
    ("services/app.py", "from services.api import jobs\nfrom services.dashboard import x\n",
     False),
    ("services/api/board.py", "from services.api.jobs import list_jobs\n", False),
])
def test_a_door_importing_another_door_fails(tmp_path, source, text, broken):
    found = doors_stay_apart(read_graph(_tree(tmp_path, {**SHAPED, source: text})))
    assert [v.rule for v in found] == (["g"] if broken else [])


def test_shared_settings_alone_may_assemble_a_domains_settings_section(tmp_path):
    extra = {"activities/signer/settings.py": "X = 1\n",
             "shared/settings/__init__.py": "from activities.signer.settings import X\n",
             "shared/settings/core.py": "from activities.signer.settings import X\n"}
    found = shared_is_domain_free(read_graph(_tree(tmp_path, {**SHAPED, **extra})))
    assert [v.text.split(":")[0] for v in found] == ["shared/settings/core.py"]
