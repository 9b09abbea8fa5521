"""The docker tier's engine, its debootstrap base image and the project's image."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.deploy.targets import REPO

IMAGE = os.environ.get("ESTEIRA_TEST_IMAGE", "esteira:test")
# The image's user (Dockerfile ARG UID): bind-mounted directories must be writable by it.
IMAGE_UID = 10001
ENGINE_SCRIPT = REPO / "scripts" / "docker-engine.sh"
BASE_SCRIPT = REPO / "scripts" / "base-image.sh"


class EngineUnavailableError(RuntimeError):
    """No Docker engine answers and none could be started here."""


def docker(*args: str, timeout: float = 120, check: bool = True,
           stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run the docker CLI; on failure raise with its output (never hidden)."""
    result = subprocess.run(["docker", *args], input=stdin, capture_output=True,
                            timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} exited {result.returncode}:\n"
                             f"{result.stdout.decode(errors='replace')[-4000:]}\n"
                             f"{result.stderr.decode(errors='replace')[-4000:]}")
    return result


def start_engine() -> bool:
    """Make an engine answer; True when this call started it (so the caller stops it)."""
    if shutil.which("docker") is None:
        raise EngineUnavailableError("the docker CLI is not installed "
                                     "(scripts/install-system-deps.sh installs docker.io)")
    if subprocess.run(["docker", "info"], capture_output=True).returncode == 0:
        return False
    result = subprocess.run(["bash", str(ENGINE_SCRIPT), "start"], capture_output=True,
                            text=True, timeout=120)
    if result.returncode != 0:
        raise EngineUnavailableError(f"dockerd could not start: {result.stderr.strip()}")
    return True


def stop_engine() -> None:
    """Stop the engine `start_engine` started (its containers stop with it)."""
    subprocess.run(["bash", str(ENGINE_SCRIPT), "stop"], check=True, timeout=120)


def base_image() -> str:
    """The debootstrap python base image: built once per machine, then reused by its tag."""
    result = subprocess.run(["bash", str(BASE_SCRIPT)], capture_output=True, text=True,
                            timeout=1800)
    if result.returncode != 0:
        raise AssertionError(f"scripts/base-image.sh failed:\n{result.stderr[-4000:]}")
    return result.stdout.strip().splitlines()[-1]


def pip_index_url() -> str | None:
    """The package index this host's pip uses, when it is a mirror (env, then config files)."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    config = configparser.ConfigParser()
    config.read(["/etc/pip.conf", "/etc/xdg/pip/pip.conf",
                 str(Path.home() / ".config" / "pip" / "pip.conf"),
                 str(Path.home() / ".pip" / "pip.conf")])
    for section in ("install", "global"):
        url = config.get(section, "index-url", fallback=None)
        if url and not url.startswith("file:"):
            return url
    return None


def build_image(base: str) -> str:
    """`docker build` of the Dockerfile on the local base; pip reaches the index as we do."""
    args = ["build", "--network", "host", "--build-arg", f"PYTHON_IMAGE={base}",
            "--target", "runtime", "--tag", IMAGE]
    if index := pip_index_url():
        args += ["--build-arg", f"PIP_INDEX_URL={index}"]
    # The classic builder: Debian's docker.io ships no buildx, and it honours --network host.
    env = {**os.environ, "DOCKER_BUILDKIT": "0"}
    previous = _image_id(IMAGE)
    result = subprocess.run(["docker", *args, str(REPO)], capture_output=True, env=env,
                            timeout=1800)
    if result.returncode != 0:
        raise AssertionError("docker build failed:\n"
                             f"{result.stdout.decode(errors='replace')[-6000:]}\n"
                             f"{result.stderr.decode(errors='replace')[-3000:]}")
    if previous and previous != _image_id(IMAGE):
        # The superseded image holds a whole virtualenv layer; the layer cache doesn't need it.
        docker("image", "rm", previous, check=False)
    return IMAGE


def _image_id(tag: str) -> str | None:
    result = docker("image", "inspect", "--format", "{{.Id}}", tag, check=False)
    return result.stdout.decode().strip() or None


def owned_by_image_user(path: Path) -> Path:
    """Create `path` writable by the image's unprivileged user (a bind mount target)."""
    path.mkdir(parents=True, exist_ok=True)
    os.chown(path, IMAGE_UID, IMAGE_UID)
    return path


def poll(condition: Callable[[], object], *, timeout: float, what: str,
         every: float = 0.5) -> object:
    """Call `condition` until it returns something truthy; fail naming `what` at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def ready_but_for_the_executors_systems(api_url: str, api_key: str) -> bool:
    """`/api/ready` is 200, or 503 with only `sisbajud:connections` red among the gating
    checks: these stacks point the executor at an unreachable Midaz and Mensageria (they test
    the image, not the executor), and readiness says so truthfully; every other gating check
    must pass. The details tell gating lines from the ones that only inform (a folder with no
    watcher in a stack that runs none)."""
    import httpx  # only the docker tier needs it here

    try:
        answer = httpx.get(f"{api_url}/api/ready", timeout=10)
        if answer.status_code == 200:
            return True
        details = httpx.get(f"{api_url}/api/ready/details", timeout=10,
                            headers={"X-API-Key": api_key})
    except httpx.HTTPError:
        return False
    failing = {check["name"] for check in details.json().get("checks", [])
               if not check.get("ok") and check.get("gating", True)}
    return answer.status_code == 503 and failing == {"sisbajud:connections"}
