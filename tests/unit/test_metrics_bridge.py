"""The Temporal metrics bridge: every SDK update counted, each series written once per drain."""

from __future__ import annotations

from prometheus_client import REGISTRY, Counter

from shared.metrics import TemporalMetricsBridge


def _value(name: str, **labels: str) -> float | None:
    # The SDK adds its own service label to every series.
    return REGISTRY.get_sample_value(name, {"service_name": "temporal-core-sdk", **labels})


def test_counters_gauges_and_histograms_arrive_whole():
    bridge = TemporalMetricsBridge()
    meter = bridge.runtime.metric_meter
    counter = meter.create_counter("esteira_test_bridge_whole_calls")
    gauge = meter.create_gauge("esteira_test_bridge_whole_slots")
    histogram = meter.create_histogram("esteira_test_bridge_whole_latency")
    for _ in range(300):
        counter.add(1, {"queue": "jobs"})
    counter.add(5, {"queue": "signing"})
    for slots in (3, 9, 7):
        gauge.set(slots, {"queue": "jobs"})
    for ms in (1, 20, 300):
        histogram.record(ms)

    assert bridge.drain() == 300 + 1 + 3 + 3

    assert _value("esteira_test_bridge_whole_calls_total", queue="jobs") == 300
    assert _value("esteira_test_bridge_whole_calls_total", queue="signing") == 5
    assert _value("esteira_test_bridge_whole_slots", queue="jobs") == 7  # the last value
    assert _value("esteira_test_bridge_whole_latency_count") == 3
    assert _value("esteira_test_bridge_whole_latency_sum") == 321


def test_a_series_is_written_once_per_drain(monkeypatch):
    bridge = TemporalMetricsBridge()
    counter = bridge.runtime.metric_meter.create_counter("esteira_test_bridge_once_calls")
    writes: list[float] = []
    inc = Counter.inc

    def counted(child, amount=1, exemplar=None):
        writes.append(amount)
        inc(child, amount, exemplar)

    monkeypatch.setattr(Counter, "inc", counted)
    counter.add(1, {"queue": "jobs"})
    bridge.drain()
    assert writes == [1]
    writes.clear()

    for _ in range(500):
        counter.add(1, {"queue": "jobs"})
    bridge.drain()

    assert writes == [500]
    assert _value("esteira_test_bridge_once_calls_total", queue="jobs") == 501


def test_the_bridge_holds_one_entry_per_series_however_many_updates():
    # The SDK hands out a new attribute object for each update of a series: a cache keyed by
    # object ids grew by one entry per update, forever, in a worker that runs for years.
    bridge = TemporalMetricsBridge()
    counter = bridge.runtime.metric_meter.create_counter("esteira_test_bridge_bounded_calls")
    for number in range(200):
        counter.add(1, {"queue": "jobs"})
        counter.add(1, {"queue": "signing"})
        if number % 10 == 0:
            bridge.drain()
    bridge.drain()

    assert len(bridge._series) == 2
    assert _value("esteira_test_bridge_bounded_calls_total", queue="jobs") == 200
    assert _value("esteira_test_bridge_bounded_calls_total", queue="signing") == 200
