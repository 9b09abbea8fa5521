"""What a domain hands the worker: its task queues, workflows and activities."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.settings import Settings


@dataclass(frozen=True)
class DomainWorker:
    """One Temporal worker's worth of a domain: a task queue and what polls it."""

    task_queue: str
    workflows: list[type] = field(default_factory=list)
    activities: list[Callable[..., Any]] = field(default_factory=list)
    max_concurrent_activities: int | None = None
    # Polls only while the signing pipeline is not paused (the durable pause row decides).
    pausable: bool = False
    # In cluster mode, polls only while an operator hasn't stood this instance down (a
    # pausable queue always does).
    stands_down: bool = False
    # Told what each read of the pause row found (the signer shows it as a gauge).
    on_pause_read: Callable[[bool], None] | None = None
    # Run workflows outside the sandbox: for a hot, tiny workflow the sandbox costs more worker
    # CPU than the work (bench/workflow_sandbox.py: a signing job 6.8 ms unsandboxed, 11.3 with
    # every module passed through, 17.6 by default); saved-history replay tests guard determinism.
    unsandboxed: bool = False


@dataclass
class WorkerDeps:
    """What domain builders may use; `resources` closes what they open when the worker stops."""

    settings: Settings
    sessions: async_sessionmaker[AsyncSession]
    instance_id: str
    resources: contextlib.AsyncExitStack
    # Tasks the worker runs beside its pollers until it stops (e.g. profile health checks).
    background: list[Callable[[asyncio.Event], Awaitable[None]]] = field(default_factory=list)
    # Runs first in every process a builder's pool spawns; the worker process passes one
    # that ties those processes to its own life (a killed worker leaves none behind).
    pool_initializer: Callable[[], None] | None = None


Builder = Callable[[WorkerDeps], Awaitable[list[DomainWorker]]]
