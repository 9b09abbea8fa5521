"""A school's settings and the listing filters refuse what no school or state can be."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from activities.pickup.models import School
from shared.settings import PickupSettings


def _refused(response) -> tuple[int, str]:
    return response.status_code, response.json()["code"]


@pytest.mark.parametrize("minutes", [1e308, 1441, 0, -5])
async def test_an_arrival_timeout_outside_one_day_is_refused(pickup_api, minutes):
    api = pickup_api
    answer = await api.http.post("/api/pickup/schools", json={
        "name": "Escola", "arrivalTimeoutMinutes": minutes})
    assert _refused(answer) == (422, "request.invalid")
    assert await api.seed.count(School) == 0


async def test_the_longest_arrival_timeout_still_times_arrivals(pickup_api):
    api = pickup_api
    school = await api.ok("POST", "/api/pickup/schools",
                          json={"name": "Escola", "arrivalTimeoutMinutes": 1440})
    sid = (await api.ok("POST", "/api/pickup/students",
                        json={"schoolId": school["id"], "name": "Ana"}))["id"]
    # 1e308 minutes used to be stored, and then every arrival failed computing its deadline.
    assert (await api.ok("POST", f"/api/pickup/students/{sid}/arrival"))["state"] == "AWAITING"


@pytest.mark.parametrize("zone", ["localtime", "Factory", "posixrules", "Mars/Olympus", ""])
async def test_only_iana_zone_names_are_a_school_day_zone(pickup_api, zone):
    api = pickup_api
    answer = await api.http.post("/api/pickup/schools",
                                 json={"name": "Escola", "timeZone": zone})
    assert _refused(answer) == (422, "request.invalid")
    assert await api.seed.count(School) == 0


@pytest.mark.parametrize("zone", ["America/Sao_Paulo", "America/Manaus", "UTC"])
async def test_iana_zone_names_are_accepted(pickup_api, zone):
    school = await pickup_api.ok("POST", "/api/pickup/schools",
                                 json={"name": "Escola", "timeZone": zone})
    assert school["timeZone"] == zone


def test_settings_refuse_a_host_zone_and_an_unbounded_timeout(monkeypatch):
    for bad in ({"day_time_zone": "localtime"}, {"link_sweep_time_zone": "Factory"},
                {"ready_timeout_minutes": 1e308}, {"arrival_timeout_minutes": 1441}):
        with pytest.raises(ValidationError):
            PickupSettings(**bad)
    monkeypatch.setenv("IONCLASS_READY_TIMEOUT_MINUTES", "1e308")
    with pytest.raises(ValidationError):
        PickupSettings()


async def test_an_unknown_state_filter_is_refused_not_an_empty_page(pickup_api):
    api = pickup_api
    school = await api.ok("POST", "/api/pickup/schools", json={"name": "Escola"})
    await api.ok("POST", "/api/pickup/students", json={"schoolId": school["id"], "name": "Ana"})
    bogus = await api.http.get(f"/api/pickup/students?school_id={school['id']}&state=bogus")
    assert _refused(bogus) == (422, "request.invalid")
    lower = await api.http.get(f"/api/pickup/students?school_id={school['id']}&state=ready")
    assert _refused(lower) == (422, "request.invalid")
    page = await api.ok("GET", f"/api/pickup/students?school_id={school['id']}&state=AT_SCHOOL")
    assert [s["name"] for s in page["items"]] == ["Ana"]
