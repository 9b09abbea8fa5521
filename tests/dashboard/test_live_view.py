"""The console live view of `esteira dev`: when it shows, what the panel says, where logs go."""

from __future__ import annotations

import asyncio
import io
import logging
import re
import uuid
from datetime import timedelta

import pytest
from rich.console import Console

from activities.signer.models.jobs import Job
from activities.signer.repository import JobRepository
from services.bootstrap import bootstrap
from services.dev.live_view import (
    ConsoleRouter,
    LiveView,
    Snapshot,
    listen_addresses,
    live_view_wanted,
    read_snapshot,
    render_panel,
)
from shared.db.engine import create_engine, session_factory
from shared.db.models import PipelineState, utcnow


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _text(renderable) -> str:
    console = Console(file=io.StringIO(), width=100, record=True)
    console.print(renderable)
    return console.export_text()


def test_only_an_interactive_console_gets_the_live_view():
    term = {"TERM": "xterm-256color"}
    assert live_view_wanted(_Stream(True), "console", term)
    assert not live_view_wanted(_Stream(False), "console", term), "piped output"
    for service in ("systemd", "docker", "kubernetes"):
        assert not live_view_wanted(_Stream(True), service, term), service
    assert not live_view_wanted(_Stream(True), "console", {"TERM": "dumb"})
    assert not live_view_wanted(_Stream(True), "console", {})


def test_the_panel_shows_every_figure_of_a_snapshot():
    snapshot = Snapshot(paused=True, pause_reason="Manutenção trimestral", queued=7,
                        in_flight={"Pades": 2, "Xades": 1}, completed=10, failed=3, canceled=1,
                        uptime_seconds=3723, addresses=[("rest api", "http://127.0.0.1:8080/api")],
                        recent=["WARN folder remessas: no profile"])
    text = _text(render_panel(snapshot))
    assert "paused (Manutenção trimestral)" in text
    assert "queue" in text and " 7" in text
    assert "3 (Pades 2 · Xades 1)" in text
    assert "completed 10 · failed 3 · canceled 1" in text
    assert "1h 02m 03s" in text
    assert "http://127.0.0.1:8080/api" in text
    assert "WARN folder remessas: no profile" in text
    running = _text(render_panel(Snapshot(False, None, 0, {}, 0, 0, 0, 90061, [])))
    assert "running" in running and "1d 1h 01m 01s" in running
    assert re.search(r"in flight\s+0\s", running)


def test_console_lines_go_to_the_panel_only_while_it_is_live():
    stream = io.StringIO()
    router = ConsoleRouter(stream)
    router.write("plain line")
    router.live = True
    router.write("kept for the panel")
    assert stream.getvalue() == "plain line\n"
    assert list(router.recent) == ["kept for the panel"]


async def test_the_snapshot_reads_the_store(settings):
    await bootstrap(settings)
    engine = create_engine(settings.sqlalchemy_url)
    sessions = session_factory(engine)
    repository = JobRepository(sessions)
    booted = utcnow()
    rows = [("Queued", "Pades", None), ("Queued", "Cades", None),
            ("Processing", "Pades", None), ("Verifying", "Xades", None),
            ("Processing", "Pades", None), ("Completed", "Pades", booted + timedelta(seconds=1)),
            ("Completed", "Pades", booted - timedelta(hours=1)),
            ("Failed", "Cades", booted + timedelta(seconds=2)),
            ("Canceled", "Pades", booted + timedelta(seconds=3))]
    for status, fmt, completed in rows:
        job_id = str(uuid.uuid4())
        await repository.insert(Job(id=job_id, file_name=f"{job_id}.pdf",
                                    original_path=f"/in/{job_id}.pdf", source="watcher",
                                    profile_name="default", format=fmt, status=status,
                                    completed_at=completed), "test row")
    async with sessions() as session:
        await session.merge(PipelineState(id=1, paused=True, reason="lunch", version=1))
        await session.commit()
    try:
        snap = await read_snapshot(sessions, booted_at=booted, uptime_seconds=5,
                                   addresses=listen_addresses(settings))
    finally:
        await engine.dispose()
    assert (snap.paused, snap.pause_reason, snap.queued) == (True, "lunch", 2)
    assert snap.in_flight == {"Pades": 2, "Xades": 1}
    assert (snap.completed, snap.failed, snap.canceled) == (1, 1, 1), "only since boot"
    assert ("rest api", f"http://127.0.0.1:{settings.ports.api}/api") in snap.addresses


@pytest.mark.parametrize("backend", ["sqlite"])
async def test_the_live_view_takes_the_console_log_and_gives_it_back(settings):
    await bootstrap(settings)
    engine = create_engine(settings.sqlalchemy_url)
    terminal = _Stream(True)
    handler = logging.StreamHandler(terminal)
    root = logging.getLogger()
    root.addHandler(handler)
    router = ConsoleRouter(terminal)
    view = LiveView(settings, session_factory(engine), router, booted_at=utcnow(),
                    stream=terminal)
    try:
        view.start()
        logging.getLogger("esteira.test").warning("while live")
        await asyncio.sleep(0)
        await view.stop()
        logging.getLogger("esteira.test").warning("after")
    finally:
        root.removeHandler(handler)
        await engine.dispose()
    output = terminal.getvalue()
    assert "while live" in router.recent[-1] and "while live\n" not in output
    assert "after\n" in output
