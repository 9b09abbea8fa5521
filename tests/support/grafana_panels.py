"""A real Prometheus (Debian's `prometheus`) with Compose's scrape jobs, asked every Grafana
panel's query: shared by the Compose stack's test and the local-process one."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

import httpx
import yaml

from tests.support.ports import free_ports

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "deploy" / "grafana" / "esteira.json"
COMPOSE_PROMETHEUS = REPO / "deploy" / "prometheus" / "prometheus.yml"
ALERTS = REPO / "deploy" / "prometheus" / "alerts.yml"
PROMETHEUS = shutil.which("prometheus")
INSTALL_HINT = ("Debian's package `prometheus` (scripts/install-system-deps.sh installs it)")
# Alerts the issue asks for, loaded from alerts.yml as Compose's Prometheus loads them.
REQUIRED_RULES = {"EsteiraWorkflowTaskFailures", "EsteiraJobFailureRate", "EsteiraHttp5xxRate"}


def panel_queries() -> list[tuple[str, str]]:
    """(panel title, PromQL) of every target of every panel of the dashboard."""
    def walk(panels):
        for panel in panels:
            yield panel
            yield from walk(panel.get("panels", []))

    dashboard = json.loads(DASHBOARD.read_text())
    return [(panel["title"], target["expr"]) for panel in walk(dashboard["panels"])
            for target in panel.get("targets", [])]


def scrape_config(ops: Mapping[str, int], temporal_metrics: int) -> dict:
    """deploy/prometheus/prometheus.yml with its DNS discovery swapped for loopback ports (each
    Compose service's ops port): the same jobs, the same `component` label, the same rule
    file, a 1 s interval."""
    config = yaml.safe_load(COMPOSE_PROMETHEUS.read_text())
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    config["rule_files"] = [str(ALERTS)]
    for job in config["scrape_configs"]:
        if job["job_name"] == "esteira":
            [discovery] = job.pop("dns_sd_configs")
            assert set(discovery["names"]) == set(ops), "a Compose service without an ops port"
            job.pop("relabel_configs")
            job["static_configs"] = [{"targets": [f"127.0.0.1:{ops[name]}"],
                                      "labels": {"component": name}}
                                     for name in discovery["names"]]
        elif job["job_name"] == "temporal":
            job["static_configs"] = [{"targets": [f"127.0.0.1:{temporal_metrics}"]}]
    return config


class Prometheus:
    """`prometheus` on a free loopback port with `config`, its data under `directory`."""

    def __init__(self, config: dict, directory: Path) -> None:
        assert PROMETHEUS, INSTALL_HINT
        [port] = free_ports(1)
        self.url = f"http://127.0.0.1:{port}"
        path = directory / "prometheus.yml"
        path.write_text(yaml.safe_dump(config))
        self.log = directory / "prometheus.log"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [PROMETHEUS, f"--config.file={path}",
                 f"--storage.tsdb.path={directory / 'prometheus-tsdb'}",
                 f"--web.listen-address=127.0.0.1:{port}"],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def __enter__(self) -> Prometheus:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)

    def query(self, expr: str) -> list[dict] | None:
        """The instant vector `expr` gives now; None while the server doesn't answer."""
        assert self.process.poll() is None, self.log.read_text(errors="replace")[-3000:]
        try:
            body = httpx.get(f"{self.url}/api/v1/query", params={"query": expr},
                             timeout=10).json()
        except (httpx.HTTPError, ValueError):
            return None
        assert body.get("status") == "success", (expr, body)
        return body["data"]["result"]

    def up(self) -> dict[tuple[str, str], str]:
        """(job, component) -> the `up` value of each target."""
        return {(r["metric"]["job"], r["metric"].get("component", "")): r["value"][1]
                for r in self.query("up") or []}

    def wait_all_up(self, targets: set[tuple[str, str]], timeout: float = 60) -> None:
        """Every one of `targets` (and nothing else) scraped and up."""
        deadline = time.monotonic() + timeout
        while (up := self.up()) != dict.fromkeys(targets, "1"):
            assert time.monotonic() < deadline, f"targets not all up: {up}"
            time.sleep(0.5)

    def panels_without_series(self, timeout: float = 90) -> list[str]:
        """`title: expr` of each panel query still without a series at the deadline (asked
        again every 2 s: a rate needs two scrapes of its counter)."""
        deadline = time.monotonic() + timeout
        while True:
            empty = [f"{title}: {expr}" for title, expr in panel_queries()
                     if not self.query(expr)]
            if not empty or time.monotonic() > deadline:
                return empty
            time.sleep(2)

    def rule_names(self) -> set[str]:
        """Every alerting and recording rule the server loaded."""
        groups = httpx.get(f"{self.url}/api/v1/rules", timeout=10).json()["data"]["groups"]
        return {rule["name"] for group in groups for rule in group["rules"]}
