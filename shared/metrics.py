"""Prometheus metrics: ours, the Temporal SDK's (bridged), one exposition for all processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import multiprocess as prometheus_multiprocess
from temporalio.runtime import (
    BUFFERED_METRIC_KIND_COUNTER,
    BUFFERED_METRIC_KIND_GAUGE,
    MetricBuffer,
    MetricBufferDurationFormat,
    Runtime,
    TelemetryConfig,
)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST
_BRIDGE_INTERVAL_SECONDS = 2.0
# Set by the API at scrape time from Temporal's poller lists (0 when nobody polls).
TASK_QUEUE_POLLERS = Gauge("esteira_task_queue_pollers",
                           "Live pollers Temporal reports for each of the project's task queues",
                           ["task_queue"], multiprocess_mode="mostrecent")
# prometheus_client registers each name once per process, whichever runtime reports it.
_BRIDGED: dict[str, tuple[object, tuple[str, ...]]] = {}


def prepare_multiprocess_dir(directory: Path) -> None:
    """Empty the shared metrics folder before the processes of a run start writing it."""
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink(missing_ok=True)


def exposition() -> bytes:
    """Text exposition of every metric; across processes when they share a folder."""
    if os.environ.get(MULTIPROC_ENV):
        registry = CollectorRegistry()
        prometheus_multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry)
    return generate_latest(REGISTRY)


def mark_process_dead(pid: int, directory: Path) -> None:
    """Drop an exited process's live gauges (e.g. jobs in flight) from the shared folder."""
    prometheus_multiprocess.mark_process_dead(pid, str(directory))  # type: ignore[no-untyped-call]


class TemporalMetricsBridge:
    """Drains the SDK's metric buffer into prometheus_client, so one endpoint shows both."""

    def __init__(self) -> None:
        self.buffer = MetricBuffer(50_000, MetricBufferDurationFormat.SECONDS)
        self.runtime = Runtime(telemetry=TelemetryConfig(metrics=self.buffer))
        # (metric name, attribute items) -> the labelled child. The SDK hands out a new
        # attribute object for many updates of the same series, so a key made of object ids
        # missed on most of them and kept every object it had seen: a leak in a long-lived
        # worker, and a label lookup per update.
        self._series: dict[tuple[str, frozenset[Any]], Any] = {}

    def drain(self) -> int:
        """Move buffered SDK updates into our registry; returns how many were moved."""
        updates = self.buffer.retrieve_updates()
        # A counter's updates add up, and only a gauge's last value counts: each series is
        # written once per drain. Multiprocess values cost a file write each, and a busy
        # worker buffers thousands of updates between drains.
        added: dict[Any, float] = {}
        latest: dict[Any, float] = {}
        for update in updates:
            child = self._child(update)
            kind = update.metric.kind
            if kind == BUFFERED_METRIC_KIND_COUNTER:
                added[child] = added.get(child, 0) + update.value
            elif kind == BUFFERED_METRIC_KIND_GAUGE:
                latest[child] = update.value
            else:
                child.observe(update.value)
        for child, amount in added.items():
            child.inc(amount)
        for child, value in latest.items():
            child.set(value)
        return len(updates)

    def _child(self, update: Any) -> Any:
        """The labelled metric of an update's series, looked up once per series."""
        key = (update.metric.name, frozenset(update.attributes.items()))
        child = self._series.get(key)
        if child is None:
            metric, labels = self._metric_for(update)
            values = {k: str(v) for k, v in update.attributes.items()}
            child = metric.labels(*(values.get(name, "") for name in labels)) if labels else metric
            self._series[key] = child
        return child

    async def run(self) -> None:
        """Drain forever at a fixed interval (cancel to stop)."""
        while True:
            self.drain()
            await asyncio.sleep(_BRIDGE_INTERVAL_SECONDS)

    def _metric_for(self, update: Any) -> tuple[Any, tuple[str, ...]]:
        name = update.metric.name
        if name not in _BRIDGED:
            labels = tuple(sorted(str(k) for k in update.attributes))
            description = update.metric.description or name
            kind = update.metric.kind
            metric: Counter | Gauge | Histogram
            if kind == BUFFERED_METRIC_KIND_COUNTER:
                metric = Counter(name, description, labels)
            elif kind == BUFFERED_METRIC_KIND_GAUGE:
                metric = Gauge(name, description, labels, multiprocess_mode="livesum")
            else:
                metric = Histogram(name, description, labels)
            _BRIDGED[name] = (metric, labels)
        return _BRIDGED[name]


@contextlib.asynccontextmanager
async def bridged_runtime() -> AsyncIterator[Runtime]:
    """A Temporal runtime whose metrics reach prometheus_client while the block runs."""
    bridge = TemporalMetricsBridge()
    task = asyncio.create_task(bridge.run())
    try:
        yield bridge.runtime
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        bridge.drain()
