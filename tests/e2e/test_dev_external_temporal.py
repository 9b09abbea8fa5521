"""`esteira dev` (the systemd target) on an existing Temporal cluster: the mode is named, the
supervisor runs no Temporal of its own, and Temporal's client configuration file is read."""

from __future__ import annotations

import os
import socket
import subprocess
import uuid

import pytest

from tests.e2e.test_dev import ESTEIRA, DevRun
from tests.e2e.test_worker_crash import REPO
from tests.support.ports import free_ports

pytestmark = pytest.mark.e2e


def _run_dev(tmp_path, **env: str) -> subprocess.CompletedProcess:
    environ = {**{k: v for k, v in os.environ.items()
                  if not k.startswith(("ESTEIRA_", "TEMPORAL_"))},
               "PYTHONPATH": str(REPO), "ESTEIRA_API_KEY": "k" * 32, **env}
    return subprocess.run([*ESTEIRA, "dev"], cwd=tmp_path, env=environ, capture_output=True,
                          text=True, timeout=60, check=False)


def test_outside_development_the_temporal_mode_must_be_named(tmp_path):
    result = _run_dev(tmp_path, ESTEIRA_ENVIRONMENT="Production")
    assert result.returncode == 1
    [error] = [line for line in result.stderr.splitlines()
               if "ESTEIRA_TEMPORAL_SERVER__MODE" in line]
    assert "external" in error and "embedded" in error and "no high availability" in error
    assert not (tmp_path / "data" / "temporal").exists(), "no embedded server was started"


def test_the_external_mode_needs_the_cluster_address(tmp_path):
    result = _run_dev(tmp_path, ESTEIRA_ENVIRONMENT="Production",
                      ESTEIRA_TEMPORAL_SERVER__MODE="external")
    assert result.returncode == 1
    assert "TEMPORAL_ADDRESS" in result.stderr


def test_the_external_mode_serves_on_the_cluster_and_runs_no_temporal(tmp_path, temporal_env):
    run = DevRun(tmp_path, free_ports(4))
    address = temporal_env.client.service_client.config.target_host
    # Temporal's own client configuration file (temporalio.envconfig) names the cluster's
    # namespace; TEMPORAL_ADDRESS its frontend.
    profile = tmp_path / "temporal.toml"
    profile.write_text('[profile.default]\nnamespace = "default"\n')
    run.env = {k: v for k, v in run.env.items() if not k.startswith("TEMPORAL_")}
    run.env.update({
        "ESTEIRA_TEMPORAL_SERVER__MODE": "external", "TEMPORAL_ADDRESS": address,
        "TEMPORAL_CONFIG_FILE": str(profile),
        # The shared test server: this run's queues and no sweeps of its own.
        "ESTEIRA_PIPELINE__TASK_QUEUE_SUFFIX": f"-ext-{uuid.uuid4().hex[:6]}",
        "ESTEIRA_SISBAJUD__TASK_QUEUE": f"sisbajud-ext-{uuid.uuid4().hex[:6]}",
        "ESTEIRA_PICKUP__SCHEDULES_ENABLED": "false",
    })
    run.start()
    try:
        run.wait_ready()
        assert not (tmp_path / "data" / "temporal").exists(), "no embedded Temporal database"
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", run.temporal)) != 0, \
                "nothing listens on ESTEIRA_PORTS__TEMPORAL"
        assert address in run.text()
    finally:
        run.stop()
