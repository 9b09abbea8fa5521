"""One profile whose check raises is recorded as degraded; the others are still checked."""

from __future__ import annotations

from activities.signer import health_reporter
from activities.signer.health import ProfileHealth
from activities.signer.health_reporter import ProfileHealthReporter, finding_key
from activities.signer.models.jobs import SigningProfile
from services.bootstrap import bootstrap
from shared.db.engine import create_engine, session_factory
from shared.findings import read_findings


async def test_a_check_that_raises_does_not_stop_the_other_profiles(settings, monkeypatch):
    await bootstrap(settings)
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    try:
        async with sessions() as session:
            session.add(SigningProfile(name="a-broken", pfx_path="/nowhere.pfx"))
            session.add(SigningProfile(name="b-good", pfx_path="/nowhere.pfx"))
            await session.commit()
        checked = []

        async def check(profile: SigningProfile) -> ProfileHealth:
            checked.append(profile.name)
            if profile.name == "a-broken":
                raise RuntimeError("a vendor module blew up")
            return ProfileHealth(profile.name, True, "pfx opened")

        monkeypatch.setattr(health_reporter, "check_profile", check)
        reporter = ProfileHealthReporter(settings, sessions, "test-worker")
        await reporter.report_once()
        keys = [finding_key("a-broken"), finding_key("b-good")]
        found = await read_findings(sessions, keys)
        assert (found[keys[0]].ok, found[keys[0]].detail) == (
            False, "DEGRADED: the check raised RuntimeError")
        assert (found[keys[1]].ok, found[keys[1]].detail) == (True, "pfx opened")
        checked.clear()
        await reporter.report_once()
        assert checked == [], "a raising check waits RECHECK_SECONDS like any other"
    finally:
        await engine.dispose()
