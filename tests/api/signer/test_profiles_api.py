"""Routing folders to profiles through the API: refusals, races, the audit line."""

from __future__ import annotations

import asyncio

import pytest

from shared.settings import Settings
from tests.api.conftest import API_KEY

# Under /etc/esteira/certs, one of the default key directories (Signing:KeyDirectories).
PFX = "/etc/esteira/certs/x.pfx"

AUTH = {"X-API-Key": API_KEY}


@pytest.fixture
def settings(settings):
    return Settings(data_dir=settings.data_dir, database_url=settings.database_url,
                    api_key=API_KEY, storage={"inputs": [{"name": "inbox"},
                                                         {"name": "remessas"}]})


async def _events(api, type_):
    return (await api.get("/api/events", params={"type": type_}, headers=AUTH)).json()["items"]


async def test_creating_a_profile_with_a_free_folder_is_audited_by_folder_name(api):
    answer = await api.post("/api/profiles", headers=AUTH, json={
        "name": "pagamentos", "format": "cades", "pfx_path": "/etc/esteira/certs/pag.pfx",
        "pfx_password_env": "PAG_PFX_PASSWORD", "input_folder": "remessas"})
    assert answer.status_code == 201, answer.text
    assert answer.json()["inputFolder"] == "remessas"
    [event] = await _events(api, "ProfileCreated")
    assert event["message"].endswith("Input folder: remessas.")
    duplicate = await api.post("/api/profiles", headers=AUTH, json={"name": "pagamentos"})
    assert (duplicate.status_code, duplicate.json()["code"]) == (409, "profile.exists")


async def test_folder_refusals_name_the_folder_and_the_owner(api):
    taken = await api.patch("/api/profiles/extra", headers=AUTH, json={"input_folder": "inbox"})
    assert (taken.status_code, taken.json()["code"]) == (404, "profile.not-found")
    await api.post("/api/profiles", headers=AUTH, json={"name": "extra", "pfx_path": PFX})
    taken = await api.patch("/api/profiles/extra", headers=AUTH, json={"input_folder": "inbox"})
    assert (taken.status_code, taken.json()["code"]) == (409, "profile.folder-taken")
    assert "default" in taken.json()["message"]
    unknown = await api.patch("/api/profiles/extra", headers=AUTH,
                              json={"input_folder": "nowhere"})
    assert (unknown.status_code, unknown.json()["code"]) == (422,
                                                             "profile.folder-not-configured")
    disable = await api.patch("/api/profiles/default", headers=AUTH, json={"enabled": False})
    assert (disable.status_code, disable.json()["code"]) == (409,
                                                             "profile.folder-still-assigned")
    both = await api.patch("/api/profiles/default", headers=AUTH,
                           json={"enabled": False, "input_folder": None})
    assert both.status_code == 200 and both.json()["inputFolder"] is None
    edits = await _events(api, "ProfileEdited")
    assert "InputFolder inbox → (none)" in edits[0]["message"]


async def test_moving_a_folder_between_profiles_in_order(api):
    await api.post("/api/profiles", headers=AUTH, json={"name": "novo", "pfx_path": PFX})
    assert (await api.patch("/api/profiles/default", headers=AUTH,
                            json={"input_folder": None})).status_code == 200
    moved = await api.patch("/api/profiles/novo", headers=AUTH, json={"input_folder": "inbox"})
    assert moved.status_code == 200
    edits = await _events(api, "ProfileEdited")
    assert "InputFolder (none) → inbox" in edits[0]["message"]


async def test_two_saves_picking_the_same_folder_leave_one_owner(api):
    for name in ("a", "b"):
        await api.post("/api/profiles", headers=AUTH, json={"name": name, "pfx_path": PFX})
    answers = await asyncio.gather(
        api.patch("/api/profiles/a", headers=AUTH, json={"input_folder": "remessas"}),
        api.patch("/api/profiles/b", headers=AUTH, json={"input_folder": "remessas"}))
    assert sorted(a.status_code for a in answers) == [200, 409]
    loser = next(a for a in answers if a.status_code == 409).json()
    assert loser["code"] == "profile.folder-taken"
    owners = [p["name"] for p in (await api.get("/api/profiles", headers=AUTH)).json()["items"]
              if p["inputFolder"] == "remessas"]
    assert len(owners) == 1 and owners[0] in loser["message"]


async def test_invalid_edits_are_refused(api):
    bad = await api.patch("/api/profiles/default", headers=AUTH, json={"format": "pdf"})
    assert (bad.status_code, bad.json()["code"]) == (422, "profile.invalid")
    name = await api.patch("/api/profiles/default", headers=AUTH, json={"name": "x"})
    assert (name.status_code, name.json()["code"]) == (422, "profile.invalid")




async def test_a_profile_level_is_edited_with_its_tsas_and_refused_when_unreachable(api):
    no_tsa = await api.patch("/api/profiles/default", headers=AUTH,
                             json={"format": "pades", "signature_level": "B-LT"})
    assert (no_tsa.status_code, no_tsa.json()["code"]) == (422, "profile.invalid")
    assert "needs a timestamp block" in no_tsa.json()["message"]
    xades = await api.patch("/api/profiles/default", headers=AUTH, json={
        "format": "xades", "signature_level": "B-T", "timestamp": {"urls": ["http://t/"]}})
    assert (xades.status_code, xades.json()["code"]) == (422, "profile.invalid")
    edited = await api.patch("/api/profiles/default", headers=AUTH, json={
        "format": "pades", "signature_level": "B-LT",
        "timestamp": {"urls": ["http://tsa.example/"], "auth": "bearer",
                      "token_env": "TSA_TOKEN"}})
    assert edited.status_code == 200, edited.text
    shown = edited.json()
    assert shown["signatureLevel"] == "B-LT"
    assert shown["effectiveLevel"] == "B-LT (TSA http://tsa.example/; sha256; auth bearer ***)"
    assert shown["timestamp"]["timeout_seconds"] == 10.0, "stored as validated"
    [event] = await _events(api, "ProfileEdited")
    assert "B-B → B-LT" in event["message"]
