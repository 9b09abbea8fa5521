"""A folder reads what its watcher last did, and only while that watcher still passes over it:
a missing row or a silent watcher is NoSignal (never Running), an unlistable folder is
Unavailable with its error, and /api/ready says so on the folder's lines."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest

from activities.signer.models.jobs import InputFolderState
from activities.signer.operator.folders import SILENT_AFTER_PASSES, silent_after
from services.app import create_app
from shared.db.models import utcnow
from tests.api.conftest import API_KEY, make_context

AUTH = {"X-API-Key": API_KEY}
UNLISTABLE = "/data/input/inbox can't be listed: No such file or directory"


@pytest.fixture
async def api(settings, temporal_env):
    """The API of a deployment that runs a watcher (its lines gate the verdict)."""
    context = await make_context(settings, temporal_env)
    settings.readiness.processes = ["watcher"]
    transport = httpx.ASGITransport(app=create_app(context))
    async with httpx.AsyncClient(transport=transport, base_url="http://esteira") as client:
        client.context = context  # type: ignore[attr-defined]
        yield client
    await context.engine.dispose()


async def _row(api, *, status: str, age: float, error: str | None = None) -> None:
    """The inbox's state row as a watcher left it `age` seconds ago."""
    async with api.context.sessions() as session:
        row = await session.get(InputFolderState, "inbox") or InputFolderState(
            name="inbox", status=status)
        row.status, row.last_error = status, error
        row.last_scan_at = utcnow() - timedelta(seconds=age)
        session.add(row)
        await session.commit()


async def _inbox(api) -> dict:
    [inbox] = (await api.get("/api/folders", headers=AUTH)).json()["items"]
    return inbox


async def _ready(api) -> tuple[int, dict[str, dict]]:
    answer = await api.get("/api/ready/details", headers=AUTH)
    return answer.status_code, {c["name"]: c for c in answer.json()["checks"]}


def _bound(api) -> float:
    return silent_after(api.context.settings).total_seconds()


def test_the_bound_follows_the_pass_interval_never_below_the_process_bound(settings):
    settings.pipeline.poll_interval_seconds = 2.0
    settings.readiness.poller_stale_seconds = 15.0
    assert silent_after(settings) == timedelta(seconds=15)
    settings.pipeline.poll_interval_seconds = 30.0
    assert silent_after(settings) == timedelta(seconds=SILENT_AFTER_PASSES * 30)


async def test_a_missing_state_row_reads_no_signal_and_fails_readiness(api):
    inbox = await _inbox(api)
    assert inbox["status"] == "NoSignal" and inbox["lastScanAt"] is None
    assert "no watcher has ever reported on this folder" in inbox["lastError"]
    code, checks = await _ready(api)
    line = checks["folder-watcher:inbox"]
    assert code == 503 and (line["ok"], line["gating"]) == (False, True)
    assert "no watcher has ever reported" in line["detail"]


async def test_a_watcher_silent_past_the_bound_reads_no_signal_and_a_live_one_running(api):
    await _row(api, status="Running", age=_bound(api) + 5)
    inbox = await _inbox(api)
    assert inbox["status"] == "NoSignal"
    assert f"silent after {_bound(api):g}s" in inbox["lastError"]
    code, checks = await _ready(api)
    assert code == 503 and checks["folder-watcher:inbox"]["ok"] is False
    assert "dead, hung or stopped" in checks["folder-watcher:inbox"]["detail"]

    await _row(api, status="Running", age=0)
    assert (await _inbox(api))["status"] == "Running"
    code, checks = await _ready(api)
    assert checks["folder-watcher:inbox"]["ok"] is True, checks["folder-watcher:inbox"]
    assert checks["input-folder:inbox"]["ok"] is True


async def test_a_watcher_that_gave_up_stays_stopped_after_it_went_quiet(api):
    await _row(api, status="Stopped", age=_bound(api) + 60, error="10 consecutive failures")
    inbox = await _inbox(api)
    assert (inbox["status"], inbox["lastError"]) == ("Stopped", "10 consecutive failures")
    code, checks = await _ready(api)
    assert code == 503 and checks["folder-watcher:inbox"]["ok"] is False
    assert "10 consecutive failures" in checks["folder-watcher:inbox"]["detail"]


async def test_an_unlistable_folder_reads_unavailable_with_its_error_and_fails_readiness(api):
    await _row(api, status="Unavailable", age=0, error=UNLISTABLE)
    inbox = await _inbox(api)
    assert (inbox["status"], inbox["lastError"]) == ("Unavailable", UNLISTABLE)
    code, checks = await _ready(api)
    assert code == 503 and checks["input-folder:inbox"]["ok"] is False
    assert UNLISTABLE in checks["input-folder:inbox"]["detail"]
    assert checks["folder-watcher:inbox"]["ok"] is True, "the watcher itself is alive"


async def test_a_folder_a_profile_just_chose_reads_starting_until_the_next_pass(api):
    await _row(api, status="Unassigned", age=0)
    assert (await _inbox(api))["status"] == "Starting"


async def test_with_no_watcher_in_the_deployment_the_line_is_red_but_not_gating(api):
    api.context.settings.readiness.processes = []
    code, checks = await _ready(api)
    line = checks["folder-watcher:inbox"]
    assert code == 200 and (line["ok"], line["gating"]) == (False, False)
