"""Prometheus metrics of the SISBAJUD executor (gateway and workers write, the API shows)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

NOTICES = Counter("esteira_sisbajud_notices_total",
                  "Streaming Hub deliveries answered by the webhook gateway, by status", ["code"])
NOTICE_SECONDS = Histogram("esteira_sisbajud_notice_seconds",
                           "Time to verify, record and answer a delivery")
ORDERS = Counter("esteira_sisbajud_orders_total",
                 "Order revisions settled, by state, effect and reason",
                 ["state", "effect", "reason"])
ALARMS = Counter("esteira_sisbajud_alarms_total", "Alarms raised, by code", ["code"])
RESULTS_SENT = Counter("esteira_sisbajud_results_sent_total",
                       "Result deliveries to the Mensageria, by outcome", ["outcome"])
# The drain stage measures the outbox on every tick; the latest reading wins.
OUTBOX_DEPTH = Gauge("esteira_sisbajud_outbox_depth", "Results waiting in the outbox",
                     multiprocess_mode="livemostrecent")
OUTBOX_AGE = Gauge("esteira_sisbajud_outbox_oldest_age_seconds",
                   "Age of the oldest result waiting in the outbox",
                   multiprocess_mode="livemostrecent")
ORPHANS_FOUND = Counter("esteira_sisbajud_orphan_operations_total",
                        "Operations on block accounts this executor did not write, first seen")
ORPHAN_SCANS = Counter("esteira_sisbajud_orphan_scans_total",
                       "Orphan checks of the block accounts, by outcome (ok, failed)",
                       ["outcome"])
ORPHAN_SCAN_ACCOUNTS = Counter("esteira_sisbajud_orphan_scan_accounts_total",
                               "Block accounts read by the orphan check, by source (written, feed)",
                               ["pass"])
ORPHANS_OPEN = Gauge("esteira_sisbajud_orphan_operations_recorded",
                     "Orphan operations on record", multiprocess_mode="livemostrecent")
UNCERTAIN_WRITES = Gauge("esteira_sisbajud_uncertain_writes",
                         "Ledger writes without a known effect, by state", ["state"],
                         multiprocess_mode="livemostrecent")
HUMAN_DECISIONS_OPEN = Gauge("esteira_sisbajud_human_decisions_open",
                             "Open human decisions, by disposition (set by the API at scrape "
                             "time)", ["disposition"], multiprocess_mode="mostrecent")
