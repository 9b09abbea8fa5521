"""One Compose project from docker-compose.yml and deploy/compose.test.yml, on the host
network of the docker tier's engine."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from tests.deploy.docker_engine import docker
from tests.deploy.targets import COMPOSE_FILE, REPO

OVERRIDE = REPO / "deploy" / "compose.test.yml"
# Every process of ours with its own ops port (/metrics, /livez, /readyz), as Compose scrapes.
OPS = ("api", "grpc", "webhook", "watcher", "worker-signer", "worker-sisbajud", "worker-pickup")
# The `simulators` profile's stand-ins the executor and the schools need, started with the
# stack; the profile's Lacuna Signer is left out (the test's profile signs locally).
SIMULATORS = {"midaz-sim": "MIDAZ", "mensageria-sim": "MENSAGERIA", "turnstile-sim": "TURNSTILE"}
SIMULATORS_PROFILE = "simulators"


def compose_command() -> list[str]:
    """Compose v2 where its plugin is installed, else Debian's v1 `docker-compose`."""
    if docker("compose", "version", check=False).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.skip("no Compose: install docker-compose (scripts/install-system-deps.sh does)")


def engine_objects() -> dict[str, set[str]]:
    """Every container, volume and network the engine holds (anonymous volumes included)."""
    return {kind: set(docker(*command).stdout.decode().split()) for kind, command in {
        "containers": ("ps", "--all", "--quiet", "--no-trunc"),
        "volumes": ("volume", "ls", "--quiet"),
        "networks": ("network", "ls", "--quiet", "--no-trunc")}.items()}


def ops_name(service: str) -> str:
    """`worker-signer` -> `OPS_WORKER_SIGNER` (ESTEIRA_TEST_PORT_OPS_WORKER_SIGNER)."""
    return "OPS_" + service.upper().replace("-", "_")


class Stack:
    """One compose project from docker-compose.yml plus the local-engine override."""

    def __init__(self, environment: dict[str, str], directory: Path) -> None:
        self.project = f"esteira-test-{uuid.uuid4().hex[:8]}"
        self.environment = environment
        merged = self.render(directory / "compose.yml")
        self.command = [*compose_command(), "--project-name", self.project, "--file", str(merged)]

    def render(self, target: Path) -> Path:
        """The two files merged by Compose itself, minus `ports:` (see deploy/compose.test.yml)."""
        rendered = subprocess.run(
            [*compose_command(), "--file", str(COMPOSE_FILE), "--file", str(OVERRIDE), "config"],
            env=self.environment, cwd=REPO, capture_output=True, text=True, timeout=60)
        assert rendered.returncode == 0, rendered.stderr
        spec = yaml.safe_load(rendered.stdout)
        # Services behind another profile (the Temporal UI, the Lacuna simulator, the
        # monitoring profile's prom/prometheus) are never started here; left in, Compose v1
        # would still create the project's bridge network for them.
        kept = {}
        for name, service in spec["services"].items():
            if name in SIMULATORS:
                assert service.pop("profiles") == [SIMULATORS_PROFILE], name
            elif "profiles" in service:
                continue
            kept[name] = service
        spec["services"] = kept
        for name, service in kept.items():
            assert service.get("network_mode") == "host", name
            service.pop("ports", None)
        target.touch(mode=0o600)  # it holds the (test) secrets
        target.write_text(yaml.safe_dump(spec, sort_keys=False))
        return target

    def __call__(self, *args: str, timeout: float = 600, stdin: bytes | None = None,
                 check: bool = True) -> subprocess.CompletedProcess[bytes]:
        result = subprocess.run([*self.command, *args], env=self.environment, cwd=REPO,
                                input=stdin, capture_output=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"compose {' '.join(args)} exited {result.returncode}:\n"
                                 f"{result.stderr.decode(errors='replace')[-4000:]}\n"
                                 f"{self.logs()}")
        return result

    def containers(self) -> dict[str, str]:
        """service -> `state health` of each container of the project."""
        ids = docker("ps", "--all", "--quiet", "--filter",
                     f"label=com.docker.compose.project={self.project}").stdout.decode().split()
        states = {}
        for line in docker("inspect", "--format",
                           '{{index .Config.Labels "com.docker.compose.service"}} '
                           "{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}"
                           "{{end}}", *ids).stdout.decode().splitlines() if ids else []:
            service, _, state = line.partition(" ")
            states[service] = state.strip()
        return states

    def logs(self) -> str:
        result = self("logs", "--no-color", "--tail", "25", timeout=60, check=False)
        return result.stdout.decode(errors="replace")[-12000:]

    def hub_send(self, *args: str) -> tuple[int, str]:
        """`esteira hub send` in the gateway's container: it signs with the configured
        secret and posts to the gateway's own port, as the Streaming Hub would."""
        sent = self("exec", "-T", "webhook", "esteira", "hub", "send", *args, timeout=90,
                    check=False)
        return sent.returncode, (sent.stdout + sent.stderr).decode(errors="replace")
