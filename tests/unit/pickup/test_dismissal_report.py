"""The dismissal report's arithmetic: standing pickups, the clock from the arrival signal,
median and nearest-rank p90, undo and timeouts."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from activities.pickup.dismissal_report import Named, Row, build, origin_of, percentile

T0 = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _report(rows: list[Row]):
    return build(school_id=1, day=date(2026, 3, 10), time_zone="UTC", starts_at=T0,
                 ends_at=T0 + timedelta(days=1), rows=rows,
                 names={1: Named("Ana", "R1")})


def test_nearest_rank_percentile():
    assert percentile([], 0.9) is None
    assert percentile([5.0], 0.9) == 5.0
    values = [float(v) for v in range(10, 110, 10)]  # 10 … 100
    assert percentile(values, 0.9) == 90.0 and percentile(values, 0.5) == 50.0
    assert percentile(list(reversed(values)), 0.91) == 100.0


def test_median_and_p90_of_ten_timed_pickups():
    rows = []
    for student in range(1, 11):
        rows += [Row(at(0), student, "arrival-signalled"),
                 Row(at(60 * student), student, "picked-up", "operator")]
    report = _report(rows)
    # 60 … 600 s: the median is the mean of the middle two, the p90 the 9th of 10.
    assert report.arrival_to_pickup.model_dump() == {"timed": 10, "median_seconds": 330.0,
                                                      "p90_seconds": 540.0}
    assert report.students_picked_up == 10
    assert report.picked_up_by.model_dump() == {"turnstile": 0, "operator": 10}


def test_an_undone_pickup_does_not_count_and_the_one_after_it_does():
    report = _report([
        Row(at(0), 1, "arrival-signalled"),
        Row(at(100), 1, "picked-up", "operator"),
        Row(at(110), 1, "pickup-undone"),
        Row(at(400), 1, "picked-up", "turnstile"),
        Row(at(0), 2, "arrival-signalled"),
        Row(at(50), 2, "picked-up", "operator"),
        Row(at(70), 2, "pickup-undone"),
    ])
    [ana, other] = report.students
    assert (ana.name, ana.registration, ana.origin, ana.arrival_to_pickup_seconds,
            ana.pickups_undone) == ("Ana", "R1", "turnstile", 400.0, 1)
    assert (other.name, other.picked_up_at, other.origin, other.pickups_undone) == (
        None, None, None, 1)
    assert (report.students_picked_up, report.pickups_undone) == (1, 2)
    assert report.picked_up_by.model_dump() == {"turnstile": 1, "operator": 0}


def test_a_timeout_stops_the_clock_and_a_new_arrival_starts_it():
    report = _report([
        Row(at(0), 1, "arrival-signalled"),
        Row(at(3600), 1, "ready-reverted"),
        Row(at(4000), 1, "arrival-signalled"),
        Row(at(4600), 1, "awaiting-reverted"),  # that signal expired
        Row(at(5000), 1, "picked-up", "operator"),  # staff, with no live signal
        Row(at(0), 2, "notification-failed"),
        Row(at(1), 2, "notification-failed"),
    ])
    [ana, other] = report.students
    assert (ana.ready_timeouts, ana.arrival_signalled_at, ana.arrival_to_pickup_seconds) == (
        1, None, None)
    assert report.arrival_to_pickup.timed == 0
    assert report.arrival_to_pickup.median_seconds is None
    assert (other.notification_failures, report.notification_failures) == (2, 2)
    assert (report.ready_timeouts, report.students_picked_up) == (1, 1)


def test_rows_are_played_in_time_order_whatever_order_they_come_in():
    report = _report([Row(at(30), 1, "picked-up", "operator"),
                      Row(at(0), 1, "arrival-signalled")])
    assert report.students[0].arrival_to_pickup_seconds == 30.0


def test_the_origin_of_an_old_row_comes_from_its_reason():
    assert origin_of({"origin": "turnstile"}, None) == "turnstile"
    assert origin_of({}, "saída na catraca") == "turnstile"
    assert origin_of({"origin": "bogus"}, "retirado") == "operator"
