"""k8s/base/prometheusrule.yaml from deploy/prometheus/alerts.yml, so the two never drift.

Regenerate after editing the rules:
    .venv/bin/python -m tests.deploy.prometheus_rule > k8s/base/prometheusrule.yaml
"""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
ALERTS_FILE = REPO / "deploy" / "prometheus" / "alerts.yml"
RULE_FILE = REPO / "k8s" / "base" / "prometheusrule.yaml"
HEADER = """\
# Generated from deploy/prometheus/alerts.yml (edit that, then regenerate):
#   .venv/bin/python -m tests.deploy.prometheus_rule > k8s/base/prometheusrule.yaml
# Needs the Prometheus Operator's CRDs; its ruleSelector must match these labels.
"""


def rule_groups() -> dict:
    """The alerting rules as Prometheus loads them."""
    return yaml.safe_load(ALERTS_FILE.read_text())


def render() -> str:
    """The PrometheusRule manifest carrying exactly the groups of alerts.yml."""
    doc = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "esteira-alerts",
                     "labels": {"app.kubernetes.io/name": "esteira",
                                "app.kubernetes.io/component": "alerts"}},
        "spec": rule_groups(),
    }
    return HEADER + yaml.safe_dump(doc, sort_keys=False, width=100, allow_unicode=True)


if __name__ == "__main__":
    print(render(), end="")
