"""Which workflows and activities each domain contributes to a worker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from shared.findings import record_finding
from shared.settings import ConfigurationError, Settings

log = logging.getLogger("esteira.worker")


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
    # Tasks the worker runs beside its pollers until it stops (e.g. profile health checks).
    background: list[Callable[[asyncio.Event], Awaitable[None]]] = field(default_factory=list)


Builder = Callable[[WorkerDeps], Awaitable[list[DomainWorker]]]


async def _ops(_deps: WorkerDeps) -> list[DomainWorker]:
    from activities.ops.probe import echo
    from shared.contracts.ops import TASK_QUEUE
    from workflows.ops.probe import ProbeWorkflow

    return [DomainWorker(TASK_QUEUE, workflows=[ProbeWorkflow], activities=[echo])]


async def _signer(deps: WorkerDeps) -> list[DomainWorker]:
    from activities.signer import engine
    from activities.signer.health_reporter import ProfileHealthReporter
    from services.worker.signer import build_signer

    # Only deployment configuration names code this process may load.
    engine.allow_pkcs11_modules(deps.settings.signing.pkcs11_modules)
    workers = await build_signer(deps)
    deps.background.append(
        ProfileHealthReporter(deps.settings, deps.sessions, deps.instance_id).run)
    return workers


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


@dataclass(frozen=True)
class PolledQueue:
    """A task queue a domain's worker polls; `pausable`: not while the pipeline is paused."""

    domain: str
    name: str
    pausable: bool = False


def polled_queues(settings: Settings) -> list[PolledQueue]:
    """Every domain's task queues as this deployment names them (no builder runs)."""
    from shared.contracts import ops, pickup
    from shared.contracts.signer import task_queues

    jobs, signing = task_queues(settings.pipeline.task_queue_suffix)
    return [PolledQueue("ops", ops.TASK_QUEUE),
            PolledQueue("signer", jobs), PolledQueue("signer", signing, pausable=True),
            PolledQueue("pickup", pickup.TASK_QUEUE),
            PolledQueue("sisbajud", settings.sisbajud.task_queue)]


def domain_finding_key(domain: str) -> str:
    """Where a worker records whether it could start a domain."""
    return f"domain:{domain}"


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
    """The workers for the chosen domains; a domain that can't start (its settings are
    missing, say) is recorded as unready and the others still run."""
    workers: list[DomainWorker] = []
    for name in names:
        try:
            built = await DOMAINS[name](deps)
        except Exception as exc:
            # A missing setting needs no traceback; anything else does.
            log.critical("Domain %s not started: %s", name, exc,
                         exc_info=not isinstance(exc, ValueError | ConfigurationError))
            await _record(deps, name, ok=False, detail=f"not started: {exc}")
            continue
        workers += built
        await _record(deps, name, ok=True, detail=f"started by {deps.instance_id}")
    return workers


async def _record(deps: WorkerDeps, domain: str, *, ok: bool, detail: str) -> None:
    try:
        await record_finding(deps.sessions, domain_finding_key(domain), ok=ok, detail=detail,
                             reporter=deps.instance_id)
    except Exception as exc:  # the store's own readiness line shows a store problem
        log.warning("Could not record domain %s as %s: %s", domain,
                    "started" if ok else "not started", exc)
