"""System -> Instances: each instance's state, Stand down / Resume behind the CSRF check."""

from __future__ import annotations

import pytest
from sqlmodel import select

from shared.db.models import Instance, OperationalEvent
from tests.dashboard.conftest import csrf_of

sqlite_only = pytest.mark.parametrize("backend", ["sqlite"])


@sqlite_only
async def test_an_operator_stands_an_instance_down_and_resumes_it(operator):
    settings = operator.context.settings
    settings.cluster.enabled, settings.cluster.instance_name = True, "node-a"
    async with operator.context.sessions() as session:
        for name, version in (("node-a", "1.0.0"), ("node-b", "1.1.0")):
            session.add(Instance(instance_id=f"{name}:worker:1", role="worker", host=name,
                                 pid=1, version=version, state="running", instance_name=name))
        await session.commit()
    page = (await operator.get("/system")).text
    assert "node-a (this instance)" in page and page.count("<td>Live</td>") == 2
    assert 'action="/system/instances/node-b/stand-down"' in page
    assert 'id="version-mix"' in page and "1.0.0, 1.1.0" in page
    refused = await operator.post("/system/instances/node-a/stand-down", data={})
    assert refused.status_code == 403, "no CSRF token, no stand-down"
    token = csrf_of(page)
    done = await operator.post("/system/instances/node-a/stand-down", data={"csrf_token": token})
    assert done.status_code == 303
    page = (await operator.get("/system")).text
    assert "Instance node-a stood down." in page and 'id="stood-down"' in page
    assert 'action="/system/instances/node-a/resume"' in page
    async with operator.context.sessions() as session:
        [event] = (await session.exec(select(OperationalEvent).where(
            OperationalEvent.type == "InstanceStoodDown"))).all()
    assert event.actor == "operator:operator"
    resumed = await operator.post("/system/instances/node-a/resume", data={"csrf_token": token})
    assert resumed.status_code == 303
    page = (await operator.get("/system")).text
    assert "Instance node-a resumed." in page and 'id="stood-down"' not in page
    missing = await operator.post("/system/instances/nowhere/stand-down",
                                  data={"csrf_token": token})
    assert "instance.not-found" in (await operator.get("/system")).text
    assert missing.status_code == 303
