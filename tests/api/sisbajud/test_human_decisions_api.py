"""Human decisions over HTTP: the list, a person's resolution, once, with the API key; two
people when the resolution moves money."""

from __future__ import annotations

import pytest

from activities.sisbajud.models import SisbajudHumanDecision
from shared.db.models import utcnow
from tests.api.conftest import API_KEY
from tests.support.sisbajud import World, new_order_id, sisbajud_settings
from tests.support.sisbajud_states import finals

AUTH = {"X-API-Key": API_KEY}
RESOLUTION = {"reason": "institution onboarded by hand", "effect": "NONE",
              "reasonCode": "NO_CLIENT"}


# On both stores: the resolution is a conditional update that writes a JSON column.
async def test_a_resolution_ends_the_wait_and_sends_the_result_once(api, settings, task_queue,
                                                                    temporal_env):
    client, order_id = temporal_env.client, new_order_id()
    world = await World(sisbajud_settings(settings, task_queue)).start()
    try:
        await world.order(order_id, institutionId="UNKNOWN-BANK")
        async with world.worker(client):
            handle = await world.hold(client, order_id)
            listed = (await api.get("/api/sisbajud/human-decisions?open=true",
                                    headers=AUTH)).json()["items"]
            (decision,) = [d for d in listed if d["orderId"] == order_id]
            assert (decision["reason"], decision["open"]) == ("institution.unconfigured", True)
            url = f"/api/sisbajud/human-decisions/{decision['id']}/resolution"
            assert (await api.post(url, json=RESOLUTION)).status_code == 401
            bad = await api.post(url, json={**RESOLUTION, "effect": "INDETERMINATE"},
                                 headers=AUTH)
            assert (bad.status_code, bad.json()["code"]) == (422, "request.invalid")
            done = await api.post(url, json=RESOLUTION, headers=AUTH)
            assert done.status_code == 200, done.text
            assert done.json()["resultKey"] == f"{order_id}:1:1"
            again = await api.post(url, json=RESOLUTION, headers=AUTH)
            assert (again.status_code, again.json()["code"]) == (409,
                                                                 "sisbajud.decision-not-open")
            await handle.result()
            await world.tick(client)
            await world.tick(client)
        (result,) = finals(await world.results(order_id))
        assert (result["body"]["effect"], result["body"]["reasonCode"]) == ("NONE", "NO_CLIENT")
        resolved = (await api.get("/api/sisbajud/human-decisions?open=false",
                                  headers=AUTH)).json()["items"]
        (row,) = [d for d in resolved if d["orderId"] == order_id]
        # The credential names the actor, not the body (no money moved: one person).
        assert (row["resolvedBy"], row["resolutionReason"]) == ("api-key",
                                                                RESOLUTION["reason"])
    finally:
        await world.close()


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_a_decision_whose_order_no_longer_waits_is_refused(api):
    async with api.context.sessions() as session:
        row = SisbajudHumanDecision(order_id=new_order_id(), revision=1,
                                    reason="institution.unconfigured", created_at=utcnow())
        session.add(row)
        await session.commit()
        await session.refresh(row)
    response = await api.post(f"/api/sisbajud/human-decisions/{row.id}/resolution",
                              json=RESOLUTION, headers=AUTH)
    assert (response.status_code, response.json()["code"]) == (409, "sisbajud.decision-not-open")
    missing = await api.post("/api/sisbajud/human-decisions/999999/resolution",
                             json=RESOLUTION, headers=AUTH)
    assert missing.status_code == 404
