"""The signer's Prometheus metrics (seed names `bulksigner_*`)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

INPUTS_DIVERGED = Counter(
    "bulksigner_inputs_diverged", "Inputs left in place because they changed mid-job",
    ["profile"])
JOBS_FINISHED = Counter(
    "bulksigner_jobs_finished", "Jobs that reached a terminal state",
    ["status", "profile", "format"])
JOBS_ENQUEUED = Counter(
    "bulksigner_jobs_enqueued", "Jobs created, by the door they came through", ["source"])
STAGE_SECONDS = Histogram(
    "bulksigner_stage_duration_seconds", "Time spent in each step of a job", ["stage"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300))
IN_FLIGHT = Gauge(
    "bulksigner_jobs_in_flight", "Jobs a worker is running now", ["format"],
    multiprocess_mode="livesum")
QUEUE_DEPTH = Gauge(
    "bulksigner_queue_depth", "Jobs waiting, by state (read from the store at scrape time)",
    ["status"], multiprocess_mode="mostrecent")
# Workers set it as they see the pause row and the API again at every scrape: the most
# recent reading is the row's state ("max" would keep a dead process's stale 1).
PIPELINE_PAUSED = Gauge(
    "bulksigner_pipeline_paused", "1 while the pipeline is paused",
    multiprocess_mode="mostrecent")
FOLDER_STATUS = Gauge(
    "bulksigner_input_folder_status", "1 for each input folder's current watcher status",
    ["folder", "status"], multiprocess_mode="mostrecent")
PROFILE_DEGRADED = Gauge(
    "bulksigner_profile_degraded",
    "1 while an enabled signing profile is DEGRADED, else 0 (set by the API at scrape time)",
    ["profile"], multiprocess_mode="mostrecent")
ARCHIVE_OLDEST_EXPIRY = Gauge(
    "bulksigner_archive_oldest_expiry_timestamp_seconds",
    "Unix time at which the soonest-expiring archived B-LTA file's last timestamp expires "
    "(read from the store at scrape time; absent when nothing is archived)",
    multiprocess_mode="mostrecent")
