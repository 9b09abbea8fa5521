"""Child processes started, restarted and stopped together, their output in one log."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from shared.logs.format import format_timestamp

log = logging.getLogger("esteira.dev")

_PR_SET_PDEATHSIG = 1
_RESTART_DELAYS = (1.0, 2.0, 5.0, 10.0, 30.0)
_TEMPORAL_LEVEL = re.compile(r"\blevel=(\w+)")
_LEVELS = {"debug": "DBG", "info": "INF", "warn": "WRN", "warning": "WRN", "error": "ERR",
           "fatal": "FTL", "panic": "FTL"}


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


def _die_with_parent() -> None:
    # If the supervisor is killed with SIGKILL, the kernel sends SIGTERM to each child, so
    # nothing is left running even then.
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class Supervisor:
    """Starts children, restarts a crashed one with backoff, stops all in reverse order."""

    def __init__(self, sink: Callable[[str, bool], None],
                 on_exit: Callable[[int], None] | None = None) -> None:
        self._sink = sink
        self._on_exit = on_exit
        self._children: dict[str, asyncio.subprocess.Process] = {}
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
        process = self._children.get(name)
        return process.pid if process and process.returncode is None else None

    async def stop(self) -> None:
        """Stop children in reverse start order: each gets SIGTERM, then SIGKILL if slow."""
        self._stopping = True
        for spec in reversed(self._specs):
            process = self._children.get(spec.name)
            if process is None or process.returncode is not None:
                continue
            log.info("Stopping %s (pid %s)", spec.name, process.pid)
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), spec.stop_timeout)
            except TimeoutError:
                log.warning("%s did not stop within %ss; killing it", spec.name, spec.stop_timeout)
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _spawn(self, spec: ChildSpec) -> None:
        process = await asyncio.create_subprocess_exec(
            *spec.argv,
            env={**os.environ, **spec.env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            preexec_fn=_die_with_parent,
        )
        self._children[spec.name] = process
        log.info("Started %s (pid %s)", spec.name, process.pid)

    async def _watch(self, spec: ChildSpec) -> None:
        failures = 0
        while True:
            process = self._children[spec.name]
            await self._pump(spec, process)
            code = await process.wait()
            if self._on_exit is not None:
                self._on_exit(process.pid)
            if self._stopping:
                return
            delay = _RESTART_DELAYS[min(failures, len(_RESTART_DELAYS) - 1)]
            failures += 1
            log.error("%s exited with code %s; restarting in %gs", spec.name, code, delay)
            await asyncio.sleep(delay)
            if self._stopping:
                return
            await self._spawn(spec)

    async def _pump(self, spec: ChildSpec, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while True:
            try:
                raw = await process.stdout.readline()
            except ValueError:  # a line over the stream limit: read on rather than stall
                raw = await process.stdout.read(65536)
            if not raw:
                return
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line:
                if spec.foreign_output:
                    self._sink(_foreign_line(spec.name, line), False)
                else:
                    self._sink(line, True)


def _foreign_line(name: str, line: str) -> str:
    """Wrap a foreign process's line in our shape so the log stays uniform."""
    match = _TEMPORAL_LEVEL.search(line)
    level = _LEVELS.get(match[1].lower(), "INF") if match else "INF"
    return f'{format_timestamp(time.time())} [{level}] {line}  {{Process: "{name}"}}'
