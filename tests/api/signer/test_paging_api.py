"""Every signer list is cursor-paged: `?limit=&cursor=` answers `{items, nextCursor}`, and
following `nextCursor` visits each row once, in the list's order."""

from __future__ import annotations

import pytest

from shared.settings import Settings
from tests.api.conftest import API_KEY

AUTH = {"X-API-Key": API_KEY}


@pytest.fixture
def settings(settings):
    return Settings(data_dir=settings.data_dir, database_url=settings.database_url,
                    api_key=API_KEY, storage={"inputs": [{"name": "inbox"}, {"name": "b"},
                                                         {"name": "C"}]})


async def _all_pages(api, path: str, **params) -> tuple[list[dict], int]:
    """Every item of a list read a page of `limit` at a time, and how many pages it took."""
    items, cursor, pages = [], None, 0
    while True:
        answer = await api.get(path, headers=AUTH,
                               params={**params, **({"cursor": cursor} if cursor else {})})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert set(body) == {"items", "nextCursor"}
        items += body["items"]
        pages += 1
        cursor = body["nextCursor"]
        if cursor is None:
            return items, pages


async def test_events_page_newest_first_without_gaps_or_repeats(api):
    for n in range(5):
        await api.post("/api/pipeline/pause", json={"reason": f"r{n}"}, headers=AUTH)
        await api.post("/api/pipeline/resume", headers=AUTH)
    everything = (await api.get("/api/events", headers=AUTH)).json()
    assert everything["nextCursor"] is None and len(everything["items"]) == 10
    paged, pages = await _all_pages(api, "/api/events", limit=3)
    assert pages == 4
    assert [e["id"] for e in paged] == [e["id"] for e in everything["items"]]
    assert [e["id"] for e in paged] == sorted((e["id"] for e in paged), reverse=True)
    only_pauses, _ = await _all_pages(api, "/api/events", limit=2, type="PipelinePaused")
    assert next(e["message"] for e in only_pauses).endswith("Reason: r4.")
    assert len(only_pauses) == 5


async def test_profiles_and_folders_page_by_name(api):
    for name in ("zeta", "alfa", "meio"):
        created = await api.post("/api/profiles", headers=AUTH,
                                 json={"name": name, "pfx_path": "/etc/esteira/certs/x.pfx"})
        assert created.status_code == 201, created.text
    profiles, pages = await _all_pages(api, "/api/profiles", limit=2)
    assert [p["name"] for p in profiles] == ["alfa", "default", "meio", "zeta"] and pages == 2
    folders, pages = await _all_pages(api, "/api/folders", limit=1)
    assert [f["name"] for f in folders] == ["b", "C", "inbox"] and pages == 3
    assert {f["status"] for f in folders} == {"NoSignal", "Unassigned"}  # no watcher runs


async def test_a_cursor_that_is_not_ours_is_refused(api):
    for path in ("/api/events", "/api/profiles", "/api/folders", "/api/jobs"):
        answer = await api.get(path, headers=AUTH, params={"cursor": "not-a-cursor"})
        assert (answer.status_code, answer.json()["code"]) == (422, "request.invalid"), path
        huge = await api.get(path, headers=AUTH, params={"limit": 501})
        assert huge.status_code == 422, path
