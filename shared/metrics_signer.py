"""The signer's Prometheus metrics (seed names `bulksigner_*`)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

INPUTS_DIVERGED = Counter(
    "bulksigner_inputs_diverged", "Inputs left in place because they changed mid-job",
    ["profile"])
JOBS_FINISHED = Counter(
    "bulksigner_jobs_finished", "Jobs that reached a terminal state", ["status", "format"])
JOBS_ENQUEUED = Counter(
    "bulksigner_jobs_enqueued", "Jobs created, by the door they came through", ["source"])
PIPELINE_PAUSED = Gauge(
    "bulksigner_pipeline_paused", "1 while the pipeline is paused", multiprocess_mode="max")
