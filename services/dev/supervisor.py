"""Child processes started, restarted and stopped together, their output in one log."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from services.parent_death import die_with_parent
from shared.logs.format import SeedLineFormatter

log = logging.getLogger("esteira.dev")

RESTART_DELAYS = (1.0, 2.0, 5.0, 10.0, 30.0)
# A child that ran this long before exiting crashed afresh: its restart delay starts over.
STABLE_AFTER_SECONDS = 60.0
# After a child exits, how long its output may still drain before the reader is dropped.
_DRAIN_SECONDS = 2.0
_STREAM_LIMIT = 1024 * 1024
_TEMPORAL_LEVEL = re.compile(r"\blevel=(\w+)")
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING,
           "warning": logging.WARNING, "error": logging.ERROR, "fatal": logging.CRITICAL,
           "panic": logging.CRITICAL}


@dataclass
class ChildSpec:
    """A process to keep running: its command, environment and how its output is read."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    # Foreign processes (the Temporal server) log in their own format: their lines are wrapped
    # in ours and kept out of the console, where its internal chatter would bury ours.
    foreign_output: bool = False
    # How long a stop may take before SIGKILL (a worker drains in-flight activities).
    stop_timeout: float = 15.0
    # The child's umask; None keeps ours.
    umask: int | None = None


@dataclass
class _Running:
    process: asyncio.subprocess.Process
    pump: asyncio.Task[None]
    started: float
    # Set once its group got the final SIGKILL: the pid may be reused after that.
    ended: bool = False

    def end_group(self) -> None:
        """SIGKILL what is left of the child's process group (its orphans hold our pipe)."""
        if not self.ended:
            self.ended = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)


def _child_setup() -> None:
    # If the supervisor is killed with SIGKILL, the kernel sends SIGTERM to each child, so
    # nothing is left running even then.
    die_with_parent(signal.SIGTERM)


class Supervisor:
    """Starts children, restarts a crashed one with backoff, stops all in reverse order."""

    def __init__(self, sink: Callable[[str, bool], None],
                 on_exit: Callable[[int], None] | None = None, *,
                 restart_delays: tuple[float, ...] = RESTART_DELAYS,
                 stable_after: float = STABLE_AFTER_SECONDS,
                 foreign_format: logging.Formatter | None = None) -> None:
        self._sink = sink
        # Our own line format (text or JSON) for the lines of foreign processes.
        self._foreign_format = foreign_format or SeedLineFormatter()
        self._on_exit = on_exit
        self._restart_delays = restart_delays
        self._stable_after = stable_after
        self._children: dict[str, _Running] = {}
        self._specs: list[ChildSpec] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False

    async def start(self, spec: ChildSpec) -> None:
        """Start `spec` and keep it running until `stop()`."""
        self._specs.append(spec)
        await self._spawn(spec)
        self._tasks.append(asyncio.create_task(self._watch(spec)))

    def pid(self, name: str) -> int | None:
        """The current pid of a child, if it is running."""
        running = self._children.get(name)
        if running is None or running.process.returncode is not None:
            return None
        return running.process.pid

    async def stop(self) -> None:
        """Stop children in reverse start order: each gets SIGTERM, then SIGKILL if slow."""
        self._stopping = True
        for spec in reversed(self._specs):
            running = self._children.get(spec.name)
            if running is None:
                continue
            process = running.process
            if process.returncode is None:
                log.info("Stopping %s (pid %s)", spec.name, process.pid)
                # Only the child itself: a worker drains its in-flight signing calls, which its
                # pool processes would abandon if they got the signal too.
                with contextlib.suppress(ProcessLookupError):
                    process.send_signal(signal.SIGTERM)
                try:
                    await asyncio.wait_for(process.wait(), spec.stop_timeout)
                except TimeoutError:
                    log.warning("%s did not stop within %ss; killing it", spec.name,
                                spec.stop_timeout)
            running.end_group()
            await process.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for running in self._children.values():
            running.end_group()  # one spawned as the stop began
            await running.process.wait()
            await self._drain(running.pump)

    async def _spawn(self, spec: ChildSpec) -> None:
        # Our own pipe rather than asyncio's PIPE: asyncio's `wait()` would wait for the pipe
        # to close too, and a crashed child's orphans keep it open.
        read_fd, write_fd = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *spec.argv,
                env={**os.environ, **spec.env},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                # Its own process group, so it and whatever it spawned are ended together.
                start_new_session=True,
                umask=-1 if spec.umask is None else spec.umask,
                preexec_fn=_child_setup,
            )
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        pipe = os.fdopen(read_fd, "rb", 0)
        try:
            reader = asyncio.StreamReader(limit=_STREAM_LIMIT)
            transport, _ = await asyncio.get_running_loop().connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), pipe)
        except BaseException:
            pipe.close()
            os.killpg(process.pid, signal.SIGKILL)  # unwatched, it would run on unseen
            await process.wait()
            raise
        pump = asyncio.create_task(self._pump(spec, reader, transport))
        self._children[spec.name] = _Running(process, pump, time.monotonic())
        log.info("Started %s (pid %s)", spec.name, process.pid)

    async def _watch(self, spec: ChildSpec) -> None:
        failures = 0
        while True:
            running = self._children[spec.name]
            code = await running.process.wait()
            ran_for = time.monotonic() - running.started
            running.end_group()
            await self._drain(running.pump)
            if self._on_exit is not None:
                self._on_exit(running.process.pid)
            if self._stopping:
                return
            if ran_for >= self._stable_after:
                failures = 0
            delay = self._restart_delays[min(failures, len(self._restart_delays) - 1)]
            failures += 1
            log.error("%s exited with code %s; restarting in %gs", spec.name, code, delay)
            await asyncio.sleep(delay)
            if self._stopping:
                return
            await self._spawn(spec)

    @staticmethod
    async def _drain(pump: asyncio.Task[None]) -> None:
        """Let the last lines of an exited child through, but never wait on its orphans."""
        await asyncio.wait({pump}, timeout=_DRAIN_SECONDS)
        if not pump.done():
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump

    async def _pump(self, spec: ChildSpec, reader: asyncio.StreamReader,
                    transport: asyncio.ReadTransport) -> None:
        try:
            while True:
                try:
                    raw = await reader.readline()
                except ValueError:  # a line over the stream limit: read on rather than stall
                    raw = await reader.read(65536)
                if not raw:
                    return
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if line:
                    if spec.foreign_output:
                        self._sink(_foreign_line(self._foreign_format, spec.name, line),
                                   False)
                    else:
                        self._sink(line, True)
        finally:
            transport.close()


def _foreign_line(formatter: logging.Formatter, name: str, line: str) -> str:
    """Wrap a foreign process's line in our shape so the log stays uniform."""
    match = _TEMPORAL_LEVEL.search(line)
    level = _LEVELS.get(match[1].lower(), logging.INFO) if match else logging.INFO
    record = logging.LogRecord(name, level, "", 0, line, None, None)
    record.created = time.time()
    record.props = {"Process": name}
    return formatter.format(record)
