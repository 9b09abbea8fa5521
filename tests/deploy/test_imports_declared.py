"""Every third-party module the code imports belongs to a distribution pyproject.toml names:
the run-time dependencies for what the services import, an extra only where the code says so."""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from shared.tracing import PACKAGES as TRACING_PACKAGES
from tests.deploy.targets import REPO

PACKAGES = ("shared", "activities", "workflows", "services")
# Generated gRPC stubs import what grpcio-tools' output needs (protobuf, grpcio): declared.
SKIPPED = ("services/grpc_server/gen/",)
# Imported only by `esteira dev`'s own children and console, which check for them first and
# name the extra to install (the production image leaves it out).
EXTRA_ONLY = {"rich": "embedded", "aiosmtpd": "embedded"}


def _imports(path: Path) -> set[str]:
    """Absolute module names a file imports (relative imports are our own)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def third_party_imports() -> dict[str, set[str]]:
    """Imported module -> files importing it, for modules neither ours nor the stdlib's."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            relative = str(path.relative_to(REPO))
            if relative.startswith(SKIPPED):
                continue
            for name in _imports(path):
                top = name.split(".")[0]
                if top in PACKAGES or top in sys.stdlib_module_names or top == "__future__":
                    continue
                found.setdefault(name, set()).add(relative)
    return found


@cache
def _top_level_owners() -> Mapping[str, list[str]]:
    return metadata.packages_distributions()


@cache
def _files_of(distribution: str) -> frozenset[str]:
    return frozenset(str(f) for f in metadata.distribution(distribution).files or ())


@cache
def distribution_of(module: str) -> str:
    """The installed distribution that provides `module` (a namespace package such as
    `google` is shared: the one holding the submodule wins)."""
    top = module.split(".")[0]
    candidates = _top_level_owners().get(top, [])
    assert candidates, f"no installed distribution provides {module}"
    if len(candidates) > 1:
        parts = module.split(".")
        for depth in range(len(parts), 1, -1):
            prefix = "/".join(parts[:depth])
            owners = [d for d in candidates
                      if any(f.startswith((prefix + "/", prefix + ".")) for f in _files_of(d))]
            if len(owners) == 1:
                return canonicalize_name(owners[0])
    return canonicalize_name(candidates[0])


def declared(extra: str | None = None) -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    texts = project["dependencies"] if extra is None else project["optional-dependencies"][extra]
    return {canonicalize_name(Requirement(text).name) for text in texts}


def test_every_imported_package_is_a_declared_run_time_dependency():
    runtime = declared()
    missing = {}
    for module, files in sorted(third_party_imports().items()):
        top = module.split(".")[0]
        if top in EXTRA_ONLY:
            continue
        distribution = distribution_of(module)
        if distribution not in runtime:
            missing[module] = (distribution, sorted(files)[:3])
    assert not missing, f"imported but not in [project.dependencies]: {missing}"


def test_what_only_esteira_dev_imports_is_in_its_extra_and_not_at_run_time():
    runtime = declared()
    for module, extra in EXTRA_ONLY.items():
        distribution = distribution_of(module)
        assert distribution in declared(extra), f"{distribution} not in the {extra} extra"
        assert distribution not in runtime, f"{distribution} ships in the image"
    importers = {module: files for module, files in third_party_imports().items()
                 if module.split(".")[0] in EXTRA_ONLY}
    assert all(f.startswith("services/dev/") for files in importers.values() for f in files), \
        importers


def test_the_walk_tells_namespace_packages_apart():
    distributions = {distribution_of(m) for m in third_party_imports()}
    assert {"starlette", "asn1crypto", "googleapis-common-protos", "protobuf"} <= distributions


def test_what_tracing_imports_by_name_is_declared_too():
    # shared/tracing.py imports OpenTelemetry only when an endpoint is set, by module name.
    assert {canonicalize_name(p) for p in TRACING_PACKAGES} <= declared()
