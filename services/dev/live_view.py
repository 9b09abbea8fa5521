"""The console live view of `esteira dev`: a panel updated in place instead of a scrolling log.

Only in an interactive terminal on a console host; services (systemd, Docker, Kubernetes) and
redirected output keep the plain log. The log file is written either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from importlib.util import find_spec
from typing import TYPE_CHECKING, TextIO

from sqlalchemy import func
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.signer.models.jobs import Job
from activities.signer.models.pipeline import read_pipeline_state
from shared.db.engine import create_engine, session_factory
from shared.settings import Settings
from shared.temporal_ui import temporal_ui_url

if TYPE_CHECKING:
    from rich.panel import Panel

REFRESH_SECONDS = 1.0
TAIL_LINES = 6
IN_FLIGHT = ("Processing", "Verifying")


def live_view_wanted(stream: TextIO, host_mode: str, environ: Mapping[str, str]) -> bool:
    """A live panel only for a person at an interactive console (never a service, a pipe or
    a dumb terminal)."""
    isatty = getattr(stream, "isatty", None)
    return (bool(isatty and isatty()) and host_mode == "console"
            and environ.get("TERM", "") not in ("", "dumb")
            # rich comes with the `embedded` extra; without it the plain log scrolls.
            and find_spec("rich") is not None)


@dataclass(frozen=True)
class Snapshot:
    """What the panel shows at one moment."""

    paused: bool
    pause_reason: str | None
    queued: int
    in_flight: dict[str, int]
    completed: int
    failed: int
    canceled: int
    uptime_seconds: float
    addresses: list[tuple[str, str]]
    recent: list[str] = field(default_factory=list)


def listen_addresses(settings: Settings) -> list[tuple[str, str]]:
    """Where this deployment answers."""
    host = settings.host
    return [("dashboard", f"http://{host}:{settings.ports.api}/"),
            ("rest api", f"http://{host}:{settings.ports.api}/api"),
            ("grpc", f"{host}:{settings.ports.grpc}"),
            ("temporal ui", temporal_ui_url(settings))]


async def read_snapshot(sessions: async_sessionmaker[AsyncSession], *, booted_at: datetime,
                        uptime_seconds: float, addresses: list[tuple[str, str]]) -> Snapshot:
    """Pause state, queue, in-flight by format and what finished since boot, from the store."""
    async with sessions() as session:
        state = await read_pipeline_state(session)
        queued = (await session.exec(select(func.count()).where(
            Job.status == "Queued"))).one()
        in_flight = dict((await session.exec(
            select(Job.format, func.count()).where(Job.status.in_(IN_FLIGHT))
            .group_by(Job.format))).all())
        finished = dict((await session.exec(
            select(Job.status, func.count()).where(Job.completed_at >= booted_at)
            .group_by(Job.status))).all())
    return Snapshot(paused=state.paused, pause_reason=state.reason, queued=queued,
                    in_flight={str(k or "?"): v for k, v in sorted(in_flight.items(),
                                                                   key=lambda kv: str(kv[0]))},
                    completed=finished.get("Completed", 0), failed=finished.get("Failed", 0),
                    canceled=finished.get("Canceled", 0), uptime_seconds=uptime_seconds,
                    addresses=addresses)


def _uptime(seconds: float) -> str:
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}h {minutes:02d}m {secs:02d}s"
    return f"{days}d {text}" if days else text


def render_panel(snapshot: Snapshot) -> Panel:
    """The panel for one snapshot."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    pipeline = (Text(f"paused ({snapshot.pause_reason})" if snapshot.pause_reason else "paused",
                     style="bold red") if snapshot.paused else Text("running", style="green"))
    table.add_row("pipeline", pipeline)
    table.add_row("queue", str(snapshot.queued))
    total = sum(snapshot.in_flight.values())
    detail = " · ".join(f"{fmt} {n}" for fmt, n in snapshot.in_flight.items())
    table.add_row("in flight", f"{total} ({detail})" if detail else str(total))
    table.add_row("since boot", f"completed {snapshot.completed} · failed {snapshot.failed} "
                                f"· canceled {snapshot.canceled}")
    table.add_row("uptime", _uptime(snapshot.uptime_seconds))
    for name, address in snapshot.addresses:
        table.add_row(name, address)
    parts: list = [table]
    if snapshot.recent:
        parts.append(Text("\n".join(snapshot.recent), style="dim", overflow="ellipsis",
                          no_wrap=True))
    return Panel(Group(*parts), title="Esteira", subtitle="Ctrl+C stops")


class ConsoleRouter:
    """Where console lines go: printed (plain log) or kept as the panel's recent lines."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self.live = False
        self.recent: deque[str] = deque(maxlen=TAIL_LINES)

    def write(self, line: str) -> None:
        """Print the line, or keep it for the panel while the live view runs."""
        if self.live:
            self.recent.append(line)
        else:
            print(line, file=self._stream or sys.stderr, flush=True)


class _Divert(logging.Filter):
    """Sends this process's console log records to the router instead of the terminal."""

    def __init__(self, router: ConsoleRouter, handler: logging.Handler) -> None:
        super().__init__()
        self._router, self._handler = router, handler

    def filter(self, record: logging.LogRecord) -> bool:
        self._router.recent.append(self._handler.format(record))
        return False


class LiveView:
    """Refreshes the panel every second until stopped; restores the plain log after."""

    def __init__(self, settings: Settings, sessions: async_sessionmaker[AsyncSession],
                 router: ConsoleRouter, *, booted_at: datetime, stream: TextIO) -> None:
        self._settings, self._sessions, self._router = settings, sessions, router
        self._booted_at, self._started = booted_at, time.monotonic()
        from rich.console import Console
        from rich.live import Live

        self._live = Live(console=Console(file=stream), auto_refresh=False,
                          redirect_stdout=False, redirect_stderr=False)
        self._diverted: list[tuple[logging.Handler, _Divert]] = []
        self._task: asyncio.Task | None = None

    async def snapshot(self) -> Snapshot:
        """The current state, with the recent console lines."""
        snap = await read_snapshot(self._sessions, booted_at=self._booted_at,
                                   uptime_seconds=time.monotonic() - self._started,
                                   addresses=listen_addresses(self._settings))
        return Snapshot(**{**snap.__dict__, "recent": list(self._router.recent)})

    def start(self) -> None:
        """Take over the console."""
        for handler in logging.getLogger().handlers:
            if type(handler) is logging.StreamHandler and \
                    getattr(handler.stream, "isatty", lambda: False)():
                divert = _Divert(self._router, handler)
                handler.addFilter(divert)
                self._diverted.append((handler, divert))
        self._router.live = True
        self._live.start()
        self._task = asyncio.create_task(self._refresh())

    async def stop(self) -> None:
        """Leave the last panel on screen and go back to the plain log."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._live.stop()
        self._router.live = False
        for handler, divert in self._diverted:
            handler.removeFilter(divert)

    async def _refresh(self) -> None:
        while True:
            try:
                self._live.update(render_panel(await self.snapshot()), refresh=True)
            except Exception as exc:
                # A busy or restarting store must not end the view; say so in the panel.
                self._router.recent.append(f"live view: store not readable ({exc})")
            await asyncio.sleep(REFRESH_SECONDS)


@contextlib.asynccontextmanager
async def live_console(settings: Settings, router: ConsoleRouter, *, booted_at: datetime,
                       host_mode: str, stream: TextIO | None = None) -> AsyncIterator[bool]:
    """While inside, the live panel replaces the console log if the console is interactive;
    yields whether it does."""
    stream = stream or sys.stderr
    if not live_view_wanted(stream, host_mode, os.environ):
        yield False
        return
    engine = create_engine(settings.sqlalchemy_url)
    view = LiveView(settings, session_factory(engine), router, booted_at=booted_at,
                    stream=stream)
    view.start()
    try:
        yield True
    finally:
        await view.stop()
        await engine.dispose()
