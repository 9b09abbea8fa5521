"""The domains a worker can run: each one's `activities.<d>.worker.build`, loaded on demand."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from shared.findings import record_finding
from shared.settings import ConfigurationError, Settings
from shared.worker_shape import Builder, DomainWorker, WorkerDeps

log = logging.getLogger("esteira.worker")


async def _ops(deps: WorkerDeps) -> list[DomainWorker]:
    from activities.ops.worker import build as build_ops

    return await build_ops(deps)


async def _signer(deps: WorkerDeps) -> list[DomainWorker]:
    from activities.signer.worker import build as build_signer

    return await build_signer(deps)


async def _pickup(deps: WorkerDeps) -> list[DomainWorker]:
    from activities.pickup.worker import build as build_pickup

    return await build_pickup(deps)


async def _sisbajud(deps: WorkerDeps) -> list[DomainWorker]:
    from activities.sisbajud.worker import build as build_sisbajud

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
    from activities.pickup.contracts import board as pickup
    from activities.signer.contracts.jobs import task_queues
    from shared.contracts import ops

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
