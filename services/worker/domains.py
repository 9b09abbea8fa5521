"""Which workflows and activities each domain contributes to a worker."""

from __future__ import annotations

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
    # Run workflows outside the sandbox: for a hot, tiny workflow the per-run sandbox costs
    # more worker CPU than the work (research/temporal.md §4); replay tests guard determinism.
    unsandboxed: bool = False


@dataclass
class WorkerDeps:
    """What domain builders may use; `resources` closes what they open when the worker stops."""

    settings: Settings
    sessions: async_sessionmaker[AsyncSession]
    instance_id: str
    resources: contextlib.AsyncExitStack


Builder = Callable[[WorkerDeps], Awaitable[list[DomainWorker]]]


async def _ops(_deps: WorkerDeps) -> list[DomainWorker]:
    from activities.ops.probe import echo
    from shared.contracts.ops import TASK_QUEUE
    from workflows.ops.probe import ProbeWorkflow

    return [DomainWorker(TASK_QUEUE, workflows=[ProbeWorkflow], activities=[echo])]


async def _signer(deps: WorkerDeps) -> list[DomainWorker]:
    from services.worker.signer import build_signer

    return await build_signer(deps)


async def _pickup(deps: WorkerDeps) -> list[DomainWorker]:
    from services.worker.pickup import build_pickup

    return await build_pickup(deps)


async def _sisbajud(deps: WorkerDeps) -> list[DomainWorker]:
    from services.worker.sisbajud import build_sisbajud

    return await build_sisbajud(deps)


# Domains register here as they land; imports stay inside the builders so a worker only
# loads the domains it runs.
DOMAINS: dict[str, Builder] = {"ops": _ops, "signer": _signer, "pickup": _pickup,
                             "sisbajud": _sisbajud}
# Task queues per domain, for `esteira status` (no builder needs to run to list them).
TASK_QUEUES: dict[str, list[str]] = {
    "ops": ["ops-v1"],
    "signer": ["signer-jobs-v1", "signer-signing-v1"],
    "pickup": ["pickup-v1"],
    "sisbajud": ["sisbajud-v1"],
}


class UnknownDomainError(ValueError):
    """A `--domains` entry that no domain answers to."""


def select(names: str) -> list[str]:
    """Parse `--domains a,b` (or `all`) into known domain names."""
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted or wanted == ["all"]:
        return list(DOMAINS)
    unknown = [n for n in wanted if n not in DOMAINS]
    if unknown:
        raise UnknownDomainError(
            f"Unknown domain(s): {', '.join(unknown)}. Known: {', '.join(DOMAINS)}."
        )
    return wanted


async def build(names: list[str], deps: WorkerDeps) -> list[DomainWorker]:
    """The workers for the chosen domains."""
    return [worker for name in names for worker in await DOMAINS[name](deps)]
