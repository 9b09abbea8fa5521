"""The daily dismissal report over the API: a built day of audit rows with known figures,
its bounds in the school's zone and day start, JSON and CSV, refusals."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest
from pydantic import SecretStr

from activities.pickup.models import AuditEntry, Notification, School, Student
from services.app import create_app
from services.app_context import ApiContext
from tests.api.pickup.conftest import PickupApi
from tests.support.pickup import API_KEY, pickup_settings

SP = ZoneInfo("America/Sao_Paulo")  # UTC-3, no DST in 2026
DAY = "2026-03-10"  # with day start 06:00: [2026-03-10 09:00Z, 2026-03-11 09:00Z)
URL = "/api/pickup/schools/{school}/reports/dismissal"
KEY = "school-key-0123456789"


def local(text: str) -> datetime:
    """A São Paulo wall-clock time ("MM-DD HH:MM:SS" in March 2026) as UTC."""
    return datetime.fromisoformat(f"2026-{text}").replace(tzinfo=SP).astimezone(UTC)


def row(school_id: int | None, student_id: int, when: str, action: str,
        **details) -> AuditEntry:
    return AuditEntry(at=local(when), school_id=school_id, entity="student",
                      entity_id=student_id, action=action, actor="test", details=details)


async def build_day(api: PickupApi) -> tuple[School, dict[str, int]]:
    """A school whose day starts at 06:00 São Paulo, seven students and their rows."""
    seed = api.seed
    school = await seed.add(School(name="Escola", arrival_timeout_minutes=15,
                                   time_zone="America/Sao_Paulo", day_start="06:00"))
    other = await seed.add(School(name="Outra", arrival_timeout_minutes=15))
    ids = {}
    for name in ("s1", "s2", "s3", "s4", "s5", "s6", "s7", "=cmd"):
        student = await seed.add(Student(school_id=school.id, name=name,
                                         registration=f"R-{name}"))
        ids[name] = student.id
    stranger = await seed.add(Student(school_id=other.id, name="x"))
    s, a, p = school.id, "arrival-signalled", "picked-up"
    rows = [
        # The day's first instant (06:00 local) is in; one second before it is the 9th's.
        row(s, ids["s1"], "03-10 06:00:00", a), row(s, ids["s1"], "03-10 06:01:00", p,
                                                   origin="operator"),
        row(s, ids["s2"], "03-10 15:00:00", a), row(s, ids["s2"], "03-10 15:02:00", p,
                                                   origin="turnstile"),
        # Picked up, undone, picked up again at the turnstile: 600 s from the signal.
        row(s, ids["s3"], "03-10 15:10:00", a), row(s, ids["s3"], "03-10 15:15:00", p,
                                                   origin="operator"),
        row(s, ids["s3"], "03-10 15:16:00", "pickup-undone"),
        row(s, ids["s3"], "03-10 15:20:00", p, origin="turnstile"),
        # READY timed out; a new signal 4 minutes before the pickup.
        row(s, ids["s4"], "03-10 16:00:00", a), row(s, ids["s4"], "03-10 17:00:00",
                                                   "ready-reverted", origin="timeout"),
        row(s, ids["s4"], "03-10 17:10:00", a), row(s, ids["s4"], "03-10 17:14:00", p,
                                                   origin="operator"),
        # Staff picked up without a signal: counted, not timed (an old row: no origin).
        AuditEntry(at=local("03-10 18:00:00"), school_id=s, entity="student",
                   entity_id=ids["s5"], action=p, actor="test", reason="retirado"),
        # The day's last minute (05:59 local on the 11th) is still the 10th.
        row(s, ids["s6"], "03-11 05:59:00", a), row(s, ids["s6"], "03-11 05:59:30", p,
                                                   origin="operator"),
        # The signal came the day before: the pickup counts, untimed.
        row(s, ids["s7"], "03-10 05:59:59", a), row(s, ids["s7"], "03-10 06:00:30", p,
                                                   origin="operator"),
        row(s, ids["=cmd"], "03-10 12:00:00", a),
        # Outside the day, or another school's: not counted.
        row(s, ids["s1"], "03-11 06:00:00", p, origin="turnstile"),
        row(s, ids["s2"], "03-10 05:00:00", "ready-reverted"),
        row(other.id, stranger.id, "03-10 12:00:00", p, origin="operator"),
    ]
    notes = [await seed.add(Notification(guardian_id=1, student_id=sid, kind="student-ready",
                                         message="m", idempotency_key=f"k{sid}"))
             for sid in (ids["s5"], ids["s2"], stranger.id)]
    failed = {"entity": "notification", "action": "notification-failed", "actor": "notifier"}
    rows += [
        AuditEntry(at=local("03-10 16:00:00"), school_id=s, entity_id=notes[0].id, **failed),
        # Written before failures carried their school: matched through the student.
        AuditEntry(at=local("03-10 16:30:00"), school_id=None, entity_id=notes[1].id, **failed),
        AuditEntry(at=local("03-10 16:30:00"), school_id=None, entity_id=notes[2].id, **failed),
        AuditEntry(at=local("03-11 07:00:00"), school_id=s, entity_id=notes[0].id, **failed),
    ]
    await seed.add(*rows)
    return school, ids


async def test_the_report_of_a_built_day(pickup_api):
    school, _ = await build_day(pickup_api)
    report = await pickup_api.ok("GET", URL.format(school=school.id), params={"day": DAY})
    assert report["day"] == DAY and report["timeZone"] == "America/Sao_Paulo"
    assert (report["startsAt"], report["endsAt"]) == ("2026-03-10T09:00:00Z",
                                                      "2026-03-11T09:00:00Z")
    assert report["studentsPickedUp"] == 7
    assert report["pickedUpBy"] == {"turnstile": 2, "operator": 5}
    # Timed: 30, 60, 120, 240, 600 s — median 120, nearest-rank p90 the 5th of 5.
    assert report["arrivalToPickup"] == {"timed": 5, "medianSeconds": 120.0,
                                         "p90Seconds": 600.0}
    assert (report["readyTimeouts"], report["pickupsUndone"],
            report["notificationFailures"]) == (1, 1, 2)
    by_name = {s["name"]: s for s in report["students"]}
    assert set(by_name) == {"s1", "s2", "s3", "s4", "s5", "s6", "s7", "=cmd"}
    s3 = by_name["s3"]
    assert (s3["origin"], s3["arrivalToPickupSeconds"], s3["pickupsUndone"],
            s3["registration"]) == ("turnstile", 600.0, 1, "R-s3")
    assert by_name["s7"]["arrivalSignalledAt"] is None
    assert by_name["s5"]["origin"] == "operator" and by_name["s5"]["notificationFailures"] == 1
    assert by_name["s2"]["notificationFailures"] == 1
    assert by_name["=cmd"]["pickedUpAt"] is None


async def test_the_csv_is_the_same_report_per_student_or_in_figures(pickup_api):
    school, ids = await build_day(pickup_api)
    answer = await pickup_api.http.get(URL.format(school=school.id) + ".csv",
                                       params={"day": DAY})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
    assert f'dismissal-{school.id}-{DAY}-students.csv' in answer.headers["content-disposition"]
    lines = list(csv.DictReader(io.StringIO(answer.text)))
    assert len(lines) == 8
    s3 = next(line for line in lines if line["name"] == "s3")
    assert (s3["picked_up_at"], s3["arrival_to_pickup_seconds"], s3["origin"]) == (
        "2026-03-10T15:20:00-03:00", "600", "turnstile")
    # A name a spreadsheet would run as a formula is written as text.
    assert next(line for line in lines if line["student_id"] == str(ids["=cmd"]))["name"] \
        == "'=cmd"
    summary = await pickup_api.http.get(URL.format(school=school.id) + ".csv",
                                        params={"day": DAY, "part": "summary"})
    figures = dict(csv.reader(io.StringIO(summary.text)))
    assert (figures["students_picked_up"], figures["picked_up_by_turnstile"],
            figures["arrival_to_pickup_median_seconds"],
            figures["arrival_to_pickup_p90_seconds"], figures["notification_failures"]) == (
        "7", "2", "120", "600", "2")
    assert figures["starts_at"] == "2026-03-10T06:00:00-03:00"


async def test_a_day_across_a_dst_change_and_the_default_day(pickup_api):
    school = await pickup_api.seed.add(School(name="NY", arrival_timeout_minutes=15,
                                              time_zone="America/New_York"))
    report = await pickup_api.ok("GET", URL.format(school=school.id),
                                 params={"day": "2026-03-08"})
    starts = datetime.fromisoformat(report["startsAt"])
    assert datetime.fromisoformat(report["endsAt"]) - starts == timedelta(hours=23)
    today = await pickup_api.ok("GET", URL.format(school=school.id))
    assert today["students"] == [] and today["arrivalToPickup"]["medianSeconds"] is None
    assert today["day"] == datetime.now(ZoneInfo("America/New_York")).date().isoformat()


@pytest.mark.parametrize("query, status, code", [
    ({"day": "2026-13-01"}, 422, "request.invalid"),
    ({"day": "9999-12-31"}, 422, "request.invalid"),
    ({"day": DAY, "part": "bogus"}, 422, "request.invalid"),
])
async def test_bad_days_and_parts_are_refused(pickup_api, query, status, code):
    school = await pickup_api.seed.add(School(name="Escola", arrival_timeout_minutes=15))
    answer = await pickup_api.http.get(URL.format(school=school.id) + ".csv", params=query)
    assert (answer.status_code, answer.json()["code"]) == (status, code)


async def test_unknown_and_other_schools_are_not_found(pickup_api, tmp_path, database_url):
    mine = await pickup_api.seed.add(School(name="Minha", arrival_timeout_minutes=15))
    other = await pickup_api.seed.add(School(name="Outra", arrival_timeout_minutes=15))
    missing = await pickup_api.http.get(URL.format(school=9999), params={"day": DAY})
    assert (missing.status_code, missing.json()["code"]) == (404, "resource.not-found")
    # A school-scoped key reads its own school's report; another's is "not found".
    settings = pickup_settings(tmp_path, database_url, school_keys={mine.id: SecretStr(KEY)})
    context = ApiContext.build(settings, pickup_api.context.engine, api_key=API_KEY,
                               temporal=pickup_api.context.temporal)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(context)),
                                 base_url="http://esteira", headers={"X-API-Key": KEY}) as http:
        assert (await http.get(URL.format(school=mine.id))).is_success
        hidden = await http.get(URL.format(school=other.id) + ".csv", params={"day": DAY})
    assert (hidden.status_code, hidden.json()["code"]) == (404, "resource.not-found")
