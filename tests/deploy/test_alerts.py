"""deploy/prometheus and deploy/grafana: rules promtool accepts, each alert unit-tested,
every expression on a metric that exists, and the same rules shipped to Kubernetes."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.deploy.prometheus_rule import ALERTS_FILE, RULE_FILE, render, rule_groups
from tests.deploy.targets import OVERLAYS, REPO, rendered

ALERTS_TEST_FILE = ALERTS_FILE.with_name("alerts_test.yml")
DASHBOARD_FILE = REPO / "deploy" / "grafana" / "esteira.json"
SOURCES = ("shared", "services", "activities", "workflows")
# Metrics defined outside this repository.
EXTERNAL = {
    # Temporal server (scrape its frontend/worker metrics port).
    "schedule_missed_catchup_window",
    # Temporal SDK, bridged into /api/metrics by shared/metrics.py (prefix `temporal_`).
    "temporal_activity_schedule_to_start_latency_bucket",
    "temporal_workflow_task_execution_failed_total",
}
RUNBOOKS = REPO / "docs" / "runbooks.md"
# Metrics the rules need that the code does not export yet; each entry says what to add.
PENDING: dict[str, str] = {}
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "offset",
                "bool", "and", "or", "unless", "inf", "nan"}
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool not found (Debian package `prometheus`; "
                             "scripts/install-system-deps.sh installs it)")


def _promtool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None  # its callers are marked needs_promtool
    return subprocess.run([PROMTOOL, *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False)


def _alerts() -> dict[str, dict]:
    return {rule["alert"]: rule for group in rule_groups()["groups"] for rule in group["rules"]}


def _exported_metrics() -> set[str]:
    """Every series name the project's prometheus_client metrics expose."""
    suffixes = {"Counter": ("_total",), "Gauge": ("",), "Histogram": ("_bucket", "_sum", "_count"),
                "Summary": ("", "_sum", "_count")}
    names: set[str] = set()
    for top in SOURCES:
        for path in (REPO / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if not (isinstance(node, ast.Call) and node.args
                        and isinstance(node.args[0], ast.Constant)):
                    continue
                kind = getattr(node.func, "id", getattr(node.func, "attr", None))
                if kind in suffixes and isinstance(node.args[0].value, str):
                    base = node.args[0].value.removesuffix("_total")
                    names |= {base + suffix for suffix in suffixes[kind]}
    return names


def metric_names(expr: str) -> set[str]:
    """Series names a PromQL expression reads (functions, keywords and labels left out)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    return {m[1] for m in re.finditer(r"(?<![\w:.])([a-zA-Z_:][\w:]*)\s*(\()?", text)
            if not m[2] and m[1] not in PROMQL_WORDS}


def _dashboard_exprs() -> list[tuple[str, str]]:
    dashboard = json.loads(DASHBOARD_FILE.read_text())
    return [(panel["title"], target["expr"]) for panel in dashboard["panels"]
            for target in panel.get("targets", [])]


@needs_promtool
def test_promtool_accepts_the_rules():
    result = _promtool("check", "rules", ALERTS_FILE)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(_alerts())} rules found" in result.stdout


@needs_promtool
def test_every_alert_fires_in_the_promtool_unit_tests():
    result = _promtool("test", "rules", ALERTS_TEST_FILE)
    assert result.returncode == 0, result.stdout + result.stderr
    cases = yaml.safe_load(ALERTS_TEST_FILE.read_text())["tests"]
    firing = {check["alertname"] for case in cases for check in case["alert_rule_test"]
              if check["exp_alerts"]}
    quiet = {check["alertname"] for case in cases for check in case["alert_rule_test"]
             if not check["exp_alerts"]}
    assert firing == set(_alerts())
    # ... and each is also seen not firing (before its `for`, or where it must not).
    assert quiet == set(_alerts())


@needs_promtool
def test_the_unit_tests_catch_a_rule_that_pages_for_a_deliberate_pause(tmp_path):
    shutil.copy(ALERTS_TEST_FILE, tmp_path)
    broken = ALERTS_FILE.read_text().replace(
        'unless on () max(bulksigner_pipeline_paused) == 1', 'unless on () vector(0) == 1')
    assert broken != ALERTS_FILE.read_text()
    (tmp_path / ALERTS_FILE.name).write_text(broken)
    result = _promtool("test", "rules", tmp_path / ALERTS_TEST_FILE.name)
    assert result.returncode == 1
    assert "EsteiraTaskQueueWithoutPoller" in result.stdout + result.stderr


def test_every_alert_is_actionable():
    for name, rule in _alerts().items():
        assert name.startswith("Esteira")
        assert rule["labels"]["severity"] in ("page", "ticket"), name
        assert {"summary", "description"} <= set(rule["annotations"]), name


def _anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_alert_links_its_own_runbook_section():
    sections = {_anchor(m[1]): m[1] for m in re.finditer(r"^## (.+)$", RUNBOOKS.read_text(),
                                                            flags=re.MULTILINE)}
    for name, rule in _alerts().items():
        url = rule["annotations"]["runbook_url"]
        path, _, anchor = url.partition("#")
        assert path == str(RUNBOOKS.relative_to(REPO)), name
        assert anchor in sections and sections[anchor] == name, f"{name}: no section {url}"
    assert set(sections.values()) == set(_alerts()), "a runbook section for a removed alert"


def test_the_three_operational_alerts_exist():
    """Non-deterministic deploys, failing jobs and server errors each page someone."""
    alerts = _alerts()
    for name in ("EsteiraWorkflowTaskFailures", "EsteiraJobFailureRate", "EsteiraHttp5xxRate"):
        assert alerts[name]["labels"]["severity"] == "page", name
    assert "temporal_workflow_task_execution_failed_total" in metric_names(
        alerts["EsteiraWorkflowTaskFailures"]["expr"])
    assert 'code="5xx"' in alerts["EsteiraHttp5xxRate"]["expr"]


def test_the_metric_parser_reads_series_not_functions_or_labels():
    assert metric_names('max by (q) (a_b{x="y(z)"}) > b offset 1h unless on () '
                        'histogram_quantile(0.9, rate(c_bucket[5m]))') == {"a_b", "b", "c_bucket"}


def test_rules_and_dashboard_read_only_metrics_that_exist():
    known = _exported_metrics() | EXTERNAL | set(PENDING)
    exprs = [(name, rule["expr"]) for name, rule in _alerts().items()] + _dashboard_exprs()
    used: set[str] = set()
    for where, expr in exprs:
        names = metric_names(expr)
        assert names, where
        assert names <= known, f"{where}: unknown metrics {sorted(names - known)}"
        used |= names
    assert set(PENDING) <= used
    defined = set(PENDING) & _exported_metrics()
    assert not defined, f"{sorted(defined)} now exported: drop them from PENDING"


def test_the_metrics_the_readme_documents_are_exported():
    exported = _exported_metrics()
    for name in ("bulksigner_pipeline_paused", "bulksigner_input_folder_status",
                 "esteira_sisbajud_uncertain_writes", "esteira_sisbajud_outbox_oldest_age_seconds",
                 "esteira_sisbajud_orphan_operations_recorded",
                 "esteira_pickup_outbound_oldest_pending_seconds",
                 "bulksigner_jobs_finished_total", "bulksigner_stage_duration_seconds_bucket"):
        assert name in exported


def test_the_dashboard_is_grafana_json_on_one_prometheus_datasource():
    dashboard = json.loads(DASHBOARD_FILE.read_text())
    assert dashboard["uid"] and dashboard["title"] == "Esteira"
    [variable] = dashboard["templating"]["list"]
    assert (variable["type"], variable["query"]) == ("datasource", "prometheus")
    panels = dashboard["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    cells: set[tuple[int, int]] = set()
    for panel in panels:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        mine = {(x, y) for x in range(grid["x"], grid["x"] + grid["w"])
                for y in range(grid["y"], grid["y"] + grid["h"])}
        assert not mine & cells, f"{panel['title']} overlaps another panel"
        cells |= mine
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
            assert panel["targets"], panel["title"]


def test_the_prometheus_rule_in_k8s_is_generated_from_alerts_yml():
    assert RULE_FILE.read_text() == render(), (
        "k8s/base/prometheusrule.yaml is stale: "
        ".venv/bin/python -m tests.deploy.prometheus_rule > k8s/base/prometheusrule.yaml")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_both_overlays_ship_the_rules(overlay):
    [rule] = [d for d in rendered(overlay) if d["kind"] == "PrometheusRule"]
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["spec"] == rule_groups()
    assert rule["metadata"]["namespace"] == ("esteira-dev" if overlay == "dev" else "esteira")


def test_rule_files_are_where_the_readme_says():
    readme = (REPO / "README.md").read_text()
    for path in (ALERTS_FILE, ALERTS_TEST_FILE, DASHBOARD_FILE):
        assert str(Path(path).relative_to(REPO)) in readme
