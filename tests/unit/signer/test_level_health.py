"""Readiness of a profile's level: a profile whose TSA doesn't answer is DEGRADED, with why."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from activities.signer.health import ProfileHealth
from activities.signer.level_health import level_health
from activities.signer.models.jobs import SigningProfile
from tests.support.ltv_pki import DEAD_URL, LtvPki, running_pki

OK = ProfileHealth("p", True, "pfx (/x.pfx) CN=LTV Signer thumbprint=AB")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LtvPki]:
    with running_pki(tmp_path_factory.mktemp("health")) as running:
        yield running


def _profile(level: str, *urls: str, **timestamp) -> SigningProfile:
    return SigningProfile(name="p", format="pades", signature_level=level,
                          timestamp={"urls": list(urls), "timeout_seconds": 3, **timestamp})


async def test_no_tsa_answering_is_degraded_with_the_reason():
    health = await level_health(OK, _profile("B-LT", DEAD_URL + "/tsa"))
    assert not health.ok
    assert health.detail.startswith("DEGRADED: B-LT needs a timestamp and no TSA answers")
    assert "127.0.0.1:1/tsa" in health.detail


async def test_a_dead_first_tsa_is_named_while_the_next_one_answers(pki):
    health = await level_health(OK, _profile("B-T", DEAD_URL + "/tsa", pki.tsa_url()))
    assert health.ok
    assert f"B-T: TSA {pki.tsa_url()} answers; unreachable, skipped: " in health.detail
    assert "127.0.0.1:1/tsa" in health.detail


async def test_an_unset_secret_is_degraded_naming_the_variable(pki, monkeypatch):
    monkeypatch.delenv("ESTEIRA_TEST_TSA_TOKEN", raising=False)
    profile = _profile("B-T", pki.tsa_url(), auth="bearer", token_env="ESTEIRA_TEST_TSA_TOKEN")
    health = await level_health(OK, profile)
    assert (health.ok, health.detail) == (
        False, "DEGRADED: environment variable(s) ESTEIRA_TEST_TSA_TOKEN not set on this worker")


async def test_b_b_and_an_already_degraded_profile_are_left_as_they_are():
    assert await level_health(OK, SigningProfile(name="p")) == OK
    broken = ProfileHealth("p", False, "DEGRADED: cannot open PFX")
    assert await level_health(broken, _profile("B-T", DEAD_URL)) == broken
