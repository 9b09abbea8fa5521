"""The three deployment targets as data: files, commands and the environment each process gets."""

from __future__ import annotations

import argparse
import copy
import functools
import re
import shlex
from pathlib import Path

import yaml

from services.cli import parser
from services.worker.domains import select
from tests.deploy.kustomize import Doc, build

REPO = Path(__file__).resolve().parents[2]
COMPOSE_FILE = REPO / "docker-compose.yml"
DOCKERFILE = REPO / "Dockerfile"
K8S = REPO / "k8s"
OVERLAYS = ("dev", "prod")
SECRET_KEYS_FILE = K8S / "base" / "secret.env.example"
UNIT_FILE = REPO / "deploy" / "systemd" / "esteira.service"
SYSTEMD_ENV_FILE = REPO / "deploy" / "systemd" / "esteira.env.example"
# The image's ENTRYPOINT; compose and Kubernetes pass only the arguments.
ENTRYPOINT = "esteira"


def compose() -> dict:
    """docker-compose.yml with anchors and merge keys resolved."""
    return yaml.safe_load(COMPOSE_FILE.read_text())


def esteira_services(spec: dict) -> dict[str, dict]:
    """Compose services that run our image (the rest are PostgreSQL and Temporal)."""
    return {name: svc for name, svc in spec["services"].items()
            if "build" in svc or str(svc.get("image", "")).startswith("${ESTEIRA_IMAGE")}


def rendered(overlay: str) -> list[Doc]:
    """`kustomize build k8s/overlays/<overlay>` (a fresh copy: tests may mutate it)."""
    return copy.deepcopy(_rendered(overlay))


@functools.cache
def _rendered(overlay: str) -> list[Doc]:
    return build(K8S / "overlays" / overlay)


def parse_command(args: list[str]) -> argparse.Namespace:
    """Parse `esteira <args>` exactly as the CLI does, domains included; raise on bad input."""
    namespace = parser().parse_args(args)
    if namespace.command == "worker":
        select(namespace.domains)
    return namespace


def env_file_keys(path: Path, *, commented: bool = False) -> set[str]:
    """Keys of a KEY=value file; with `commented`, `# KEY=…` lines count too (documented)."""
    pattern = r"^\s*(?:#\s*)?([A-Z][A-Z0-9_]*)=" if commented else r"^\s*([A-Z][A-Z0-9_]*)="
    return {m[1] for line in path.read_text().splitlines() if (m := re.match(pattern, line))}


def unit_entries(path: Path = UNIT_FILE) -> dict[str, list[tuple[str, str]]]:
    """A systemd unit as {section: [(key, value), …]} (keys may repeat, as systemd allows)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        if current is None or "=" not in line:
            raise ValueError(f"{path}: not a unit line: {raw!r}")
        key, _, value = line.partition("=")
        current.append((key.strip(), value.strip()))
    return sections


def unit_value(sections: dict[str, list[tuple[str, str]]], section: str, key: str) -> str:
    """The last value of `key` in `section` (systemd's override rule)."""
    values = [v for k, v in sections.get(section, []) if k == key]
    if not values:
        raise KeyError(f"[{section}] {key}")
    return values[-1]


def unit_command(sections: dict[str, list[tuple[str, str]]]) -> list[str]:
    """ExecStart split like systemd does (no shell)."""
    return shlex.split(unit_value(sections, "Service", "ExecStart"))
