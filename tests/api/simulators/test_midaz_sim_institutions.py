"""Which institutions' ledgers `esteira simulator midaz` holds: those without a `base_url`
(`esteira dev`), or every configured one (`--every-institution`, Compose's profile)."""

from __future__ import annotations

import httpx
import pytest

from services.cli import parser
from services.dev.sisbajud_sims import DEMO_DOCUMENT, midaz_simulator
from services.simulators.oauth import IssuedBearer
from shared.settings import Settings

ORG, LEDGER = "0190a000-0000-7000-8000-0000000c0001", "0190a000-0000-7000-8000-0000000c0002"


def _settings(tmp_path) -> Settings:
    return Settings(data_dir=tmp_path, sisbajud={"institutions": [{
        "id": "BANK", "base_url": "http://midaz-sim:8091", "client_id": "esteira",
        "client_secret": "s3cret", "organization_id": ORG, "ledger_id": LEDGER}]})


async def _ledger_and_subject(app) -> tuple[int, int]:
    """The ledger's status and how many CRM instruments the demo subject has there."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://sim",
                                 auth=IssuedBearer(app)) as http:
        ledger = await http.get(f"/v1/organizations/{ORG}/ledgers/{LEDGER}")
        instruments = await http.get(f"/v1/organizations/{ORG}/instruments",
                                     params={"document": DEMO_DOCUMENT})
    items = instruments.json().get("items", []) if instruments.status_code == 200 else []
    return ledger.status_code, len(items)


@pytest.mark.parametrize(("every", "expected"), [(False, (404, 0)), (True, (200, 3))])
async def test_an_institution_naming_the_simulator_is_held_only_with_every_institution(
        tmp_path, every, expected):
    app = await midaz_simulator(_settings(tmp_path), every_institution=every)
    assert await _ledger_and_subject(app) == expected


def test_the_command_line_takes_the_flag():
    args = parser().parse_args(["simulator", "midaz", "--every-institution"])
    assert args.every_institution is True
    assert parser().parse_args(["simulator", "midaz"]).every_institution is False
