"""Cluster instances: Live / Stopped / No signal, stand down / resume, version mix, readiness."""

from __future__ import annotations

import logging
import re
from datetime import timedelta

import pytest
from sqlmodel import select

from activities.signer.operator import InstanceState, SignerOperations
from services.status import instance_lines, print_status
from shared.db.engine import create_engine, session_factory
from shared.db.models import Instance, OperationalEvent, utcnow
from shared.instances import cluster_instance_name, registered_instance
from tests.api.conftest import API_KEY
from tests.support.ports import free_ports

AUTH = {"X-API-Key": API_KEY}
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"])


async def _process(sessions, name: str, *, role: str = "worker", pid: int = 1,
                   seen_ago: float = 0, state: str = "running", version: str = "1.0.0") -> None:
    async with sessions() as session:
        seen = utcnow() - timedelta(seconds=seen_ago)
        session.add(Instance(instance_id=f"{name}:{role}:{pid}", role=role, host=name, pid=pid,
                             version=version, state=state, started_at=seen, last_seen_at=seen,
                             stopped_at=seen if state == "stopped" else None,
                             instance_name=name))
        await session.commit()


def _cluster_on(api, name: str = "node-a") -> None:
    api.context.settings.cluster.enabled = True
    api.context.settings.cluster.instance_name = name


async def _events(api, type: str) -> list[OperationalEvent]:
    async with api.context.sessions() as session:
        return list((await session.exec(select(OperationalEvent).where(
            OperationalEvent.type == type))).all())


@sqlite_only
async def test_instances_are_live_stopped_or_silent_against_the_stale_limit(api):
    sessions, settings = api.context.sessions, api.context.settings
    settings.cluster.stale_after_seconds = 60
    await _process(sessions, "live", seen_ago=50)
    await _process(sessions, "live", role="api", pid=2, seen_ago=3600)  # an old silent life
    await _process(sessions, "retired", state="stopped", seen_ago=5)
    await _process(sessions, "silent", seen_ago=61)
    await _process(sessions, "silent", role="api", pid=3, state="stopped", seen_ago=600)
    instances = api.context.faces.signer.instances
    states = {v.name: v.state for v in (await instances.cluster()).instances}
    assert states == {"live": InstanceState.LIVE, "retired": InstanceState.STOPPED,
                      "silent": InstanceState.NO_SIGNAL}
    # The same rows judged eleven seconds later: `live` fell past the limit.
    later = await instances.cluster(now=utcnow() + timedelta(seconds=11))
    assert {v.name: v.state for v in later.instances}["live"] is InstanceState.NO_SIGNAL
    answer = await api.get("/api/instances", headers=AUTH)
    assert answer.status_code == 200
    body = answer.json()
    assert {i["name"]: i["state"] for i in body["instances"]} == {
        "live": "Live", "retired": "Stopped", "silent": "No signal"}
    assert body["staleAfterSeconds"] == 60 and body["versionMix"] is None
    assert body["instance"] == cluster_instance_name(settings.cluster)
    assert (await api.get("/api/instances")).status_code == 401


async def test_stand_down_and_resume_record_the_actor_once_and_survive_a_new_reader(api):
    _cluster_on(api)
    await _process(api.context.sessions, "node-a")
    await _process(api.context.sessions, "node-b")
    assert (await api.post("/api/instances/node-a/stand-down")).status_code == 401
    first = await api.post("/api/instances/node-a/stand-down", headers=AUTH)
    assert first.status_code == 200
    assert (first.json()["stoodDown"], first.json()["changedBy"]) == (True, "api-key")
    again = await api.post("/api/instances/node-a/stand-down", headers=AUTH)
    assert again.status_code == 200 and again.json()["stoodDown"] is True
    [event] = await _events(api, "InstanceStoodDown")
    assert event.actor == "api-key" and event.properties == {"instance": "node-a"}
    # Another process (a restart) reads the flag from the store.
    engine = create_engine(api.context.settings.sqlalchemy_url)
    try:
        restarted = SignerOperations(api.context.settings, session_factory(engine),
                                     api.context.temporal)
        fresh = await restarted.instances.cluster()
    finally:
        await engine.dispose()
    assert {v.name: v.stood_down for v in fresh.instances} == {"node-a": True, "node-b": False}
    resumed = await api.post("/api/instances/node-a/resume", headers=AUTH)
    assert resumed.status_code == 200 and resumed.json()["stoodDown"] is False
    assert (await api.post("/api/instances/node-a/resume", headers=AUTH)).status_code == 200
    [event] = await _events(api, "InstanceResumed")
    assert event.actor == "api-key" and "node-a" in event.message


@sqlite_only
async def test_an_unknown_instance_is_404_and_cluster_mode_off_is_409(api):
    await _process(api.context.sessions, "node-a")
    off = await api.post("/api/instances/node-a/stand-down", headers=AUTH)
    assert off.status_code == 409 and off.json()["code"] == "instance.cluster-disabled"
    _cluster_on(api)
    for action in ("stand-down", "resume"):
        missing = await api.post(f"/api/instances/nowhere/{action}", headers=AUTH)
        assert missing.status_code == 404 and missing.json()["code"] == "instance.not-found"
    assert await _events(api, "InstanceStoodDown") == []


@sqlite_only
async def test_mixed_versions_across_live_instances_raise_the_alarm(api):
    sessions = api.context.sessions
    await _process(sessions, "node-a", version="1.0.0")
    await _process(sessions, "node-b", version="1.0.0")
    await _process(sessions, "node-old", version="0.9.0", seen_ago=3600)  # silent: not counted
    assert (await api.get("/api/instances", headers=AUTH)).json()["versionMix"] is None
    await _process(sessions, "node-c", version="1.1.0")
    alarm = (await api.get("/api/instances", headers=AUTH)).json()["versionMix"]
    assert alarm["code"] == "cluster.version-mix" and "1.0.0, 1.1.0" in alarm["message"]


@sqlite_only
async def test_the_newer_boot_logs_a_critical_on_mixed_versions(api, caplog):
    _cluster_on(api, "node-new")
    await _process(api.context.sessions, "node-a", version="0.0.1-old")
    with caplog.at_level(logging.CRITICAL, logger="esteira.instances"):
        async with registered_instance(api.context.sessions, "api",
                                       api.context.settings.cluster) as ident:
            async with api.context.sessions() as session:
                row = await session.get(Instance, ident)
            assert row.instance_name == "node-new"
    assert any("Mixed versions across live instances" in r.message and "0.0.1-old" in r.message
               for r in caplog.records)


@sqlite_only
async def test_cluster_instance_readiness_line_is_red_when_stood_down_but_not_gating(api):
    async def checks():
        answer = await api.get("/api/ready/details", headers=AUTH)
        return answer.status_code, {c["name"]: c for c in answer.json()["checks"]}

    assert "cluster-instance" not in (await checks())[1], "cluster mode only"
    _cluster_on(api)
    await _process(api.context.sessions, "node-a")
    status, found = await checks()
    assert status == 200 and found["cluster-instance"]["ok"] is True
    assert found["cluster-instance"]["gating"] is False
    assert "node-a" in found["cluster-instance"]["detail"]
    await api.post("/api/instances/node-a/stand-down", headers=AUTH)
    status, found = await checks()
    assert status == 200, "a stood-down instance still serves: the line doesn't gate"
    assert found["cluster-instance"]["ok"] is False
    assert "node-a stood down by api-key" in found["cluster-instance"]["detail"]


@sqlite_only
async def test_folders_say_which_instance_answered(api):
    _cluster_on(api, "node-z")
    [inbox] = (await api.get("/api/folders", headers=AUTH)).json()["items"]
    assert inbox["name"] == "inbox" and inbox["instance"] == "node-z"


@sqlite_only
async def test_status_lists_instances_with_state_stand_down_and_the_alarm(api, temporal_env,
                                                                          capsys):
    _cluster_on(api)
    sessions, settings = api.context.sessions, api.context.settings
    await _process(sessions, "node-a", version="1.0.0")
    await _process(sessions, "node-b", version="1.1.0")
    await _process(sessions, "node-c", state="stopped", seen_ago=30)
    await api.post("/api/instances/node-b/stand-down", headers=AUTH)
    text = "\n".join(instance_lines(await api.context.faces.signer.instances.cluster()))
    assert "(cluster mode; this is node-a; no signal after 60s)" in text
    assert [line.split()[:2] for line in text.splitlines()[2:5]] == [
        ["node-a", "Live"], ["node-b", "Live"], ["node-c", "Stopped"]]
    assert "STOOD DOWN by api-key" in text.splitlines()[3]
    assert "ALARM         mixed versions across live instances: 1.0.0, 1.1.0" in text
    # `esteira status` prints the same lines (its API line fails: no API listens there).
    settings.temporal.address = temporal_env.client.service_client.config.target_host
    [settings.ports.api] = free_ports(1)
    await print_status(settings)

    def ages_out(lines: str) -> str:
        return re.sub(r"\d+s ago", "", lines)  # the two readings may straddle a second

    assert ages_out(text) in ages_out(capsys.readouterr().out)
