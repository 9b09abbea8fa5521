"""Contract of the `ops` domain: a probe workflow that proves the worker path end to end."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

DOMAIN = "ops"
TASK_QUEUE = "ops-v1"


def probe_workflow_id(probe_id: str) -> str:
    """`ops-probe:<id>`."""
    return f"ops-probe:{probe_id}"


class RunProbeInput(BaseModel):
    """Start a probe; `payload` is echoed back through one activity."""

    model_config = ConfigDict(frozen=True)

    payload: str = ""


class ProbeResult(BaseModel):
    """What the probe's activity saw."""

    model_config = ConfigDict(frozen=True)

    payload: str
    worker_identity: str
